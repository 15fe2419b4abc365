// The usage tab's numbers from `usageByDay` rows: the charts' day axis and series (a day without usage is a zero, not
// a gap), the range's totals and the per-model and per-tier summaries. Pure, so the arithmetic is tested apart from the page.
import { MICROS_PER_UNIT } from "../../billing/cost.ts";
import type { DailyUsage, UsageTotals } from "../../db/usage-repo.ts";
import { addDays, type DayRange, dayToUnix, daysIn } from "./usage-range.ts";

/** What dashboard.js's drawCharts reads from a chart's JSON block. */
export interface ChartData {
  /** Unix seconds of the start of each UTC day. */
  x: number[];
  series: { label: string; values: number[] }[];
}

export interface UsageCharts {
  /** Requests per day, one series per model. */
  requests: ChartData;
  /** Input and output tokens per day, all models together. */
  tokens: ChartData;
  /** Spend per day in currency units, all models together. */
  spend: ChartData;
}

export interface ModelTotals extends UsageTotals {
  model: string;
}

export interface TierTotals extends UsageTotals {
  serviceTier: string;
}

/** Every UTC day of the range, in order. */
export function dayAxis(range: DayRange): string[] {
  const days: string[] = [];
  for (let i = 0, n = daysIn(range); i < n; i++) days.push(addDays(range.from, i));
  return days;
}

/** The three charts of the range: rows outside it are ignored, days without a row are zeros. */
export function usageCharts(rows: readonly DailyUsage[], range: DayRange): UsageCharts {
  const days = dayAxis(range);
  const index = new Map(days.map((d, i) => [d, i]));
  const zeros = () => days.map(() => 0);
  const perModel = new Map<string, number[]>();
  const input = zeros();
  const output = zeros();
  const spendMicros = zeros();
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    let values = perModel.get(r.model);
    if (!values) perModel.set(r.model, (values = zeros()));
    values[i]! += r.requests;
    input[i]! += r.inputTokens;
    output[i]! += r.outputTokens;
    spendMicros[i]! += r.costMicros;
  }
  const x = days.map((d) => dayToUnix(d)!);
  const models = [...perModel.keys()].sort();
  return {
    requests: { x, series: models.map((m) => ({ label: m, values: perModel.get(m)! })) },
    tokens: { x, series: [{ label: "Input tokens", values: input }, { label: "Output tokens", values: output }] },
    // Summed in micro-units (integers, exact) and only then turned into currency units for the chart's axis.
    spend: { x, series: [{ label: "Spend", values: spendMicros.map((m) => m / MICROS_PER_UNIT) }] },
  };
}

const zero = (): UsageTotals => ({ requests: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0 });

function add(into: UsageTotals, r: UsageTotals): void {
  into.requests += r.requests;
  into.inputTokens += r.inputTokens;
  into.cachedTokens += r.cachedTokens;
  into.outputTokens += r.outputTokens;
  into.images += r.images;
  into.costMicros += r.costMicros;
}

/** The sums of all rows. */
export function totalsOf(rows: readonly UsageTotals[]): UsageTotals {
  const t = zero();
  for (const r of rows) add(t, r);
  return t;
}

/** The sums per model, the biggest spender first (then the most requests, then by name). */
export function totalsByModel(rows: readonly DailyUsage[]): ModelTotals[] {
  const by = new Map<string, ModelTotals>();
  for (const r of rows) {
    let t = by.get(r.model);
    if (!t) by.set(r.model, (t = { model: r.model, ...zero() }));
    add(t, r);
  }
  return [...by.values()].sort((a, b) => b.costMicros - a.costMicros || b.requests - a.requests || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/** The sums per service tier, the biggest spender first (then the most requests, then by name). */
export function totalsByTier(rows: readonly DailyUsage[]): TierTotals[] {
  const by = new Map<string, TierTotals>();
  for (const r of rows) {
    let t = by.get(r.serviceTier);
    if (!t) by.set(r.serviceTier, (t = { serviceTier: r.serviceTier, ...zero() }));
    add(t, r);
  }
  return [...by.values()].sort((a, b) => b.costMicros - a.costMicros || b.requests - a.requests || (a.serviceTier < b.serviceTier ? -1 : a.serviceTier > b.serviceTier ? 1 : 0));
}
