// The usage tab's charts and sums from daily rows: a zero for every day without usage, a month end crossed, a model
// present on some days only, spend summed exactly.
import { describe, expect, test } from "bun:test";
import type { DailyUsage } from "../../../../src/db/usage-repo.ts";
import { dayAxis, totalsByModel, totalsByTier, totalsOf, usageCharts } from "../../../../src/dashboard/tabs/usage-series.ts";

const at = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

function row(day: string, model: string, n: Partial<DailyUsage> = {}): DailyUsage {
  return { day, team: "t", model, serviceTier: "default", requests: 1, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0, ...n };
}

describe("dayAxis", () => {
  test("every day of the range, across a month end and a leap day", () => {
    expect(dayAxis({ from: "2026-01-30", to: "2026-02-02" })).toEqual(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
    expect(dayAxis({ from: "2024-02-28", to: "2024-03-01" })).toEqual(["2024-02-28", "2024-02-29", "2024-03-01"]);
    expect(dayAxis({ from: "2026-05-05", to: "2026-05-05" })).toEqual(["2026-05-05"]);
    expect(dayAxis({ from: "2024-01-01", to: "2024-12-31" })).toHaveLength(366);
  });
});

describe("usageCharts", () => {
  const range = { from: "2026-01-30", to: "2026-02-02" };
  const rows = [
    row("2026-01-30", "alpha", { requests: 3, inputTokens: 100, outputTokens: 40, costMicros: 1_500_000 }),
    row("2026-01-30", "beta", { requests: 1, inputTokens: 10, outputTokens: 5, costMicros: 250_000 }),
    // 2026-01-31: nothing at all.
    row("2026-02-01", "alpha", { requests: 2, inputTokens: 7, outputTokens: 9, costMicros: 1 }),
    row("2026-02-02", "beta", { requests: 5, inputTokens: 1, outputTokens: 2, costMicros: 0 }),
  ];

  test("the x axis is each day's UTC midnight, across the month end", () => {
    expect(usageCharts(rows, range).requests.x).toEqual([at("2026-01-30"), at("2026-01-31"), at("2026-02-01"), at("2026-02-02")]);
  });

  test("requests: one series per model, by name, zeros where the model had no row", () => {
    expect(usageCharts(rows, range).requests.series).toEqual([
      { label: "alpha", values: [3, 0, 2, 0] },
      { label: "beta", values: [1, 0, 0, 5] },
    ]);
  });

  test("tokens: input and output summed over models, per day", () => {
    expect(usageCharts(rows, range).tokens.series).toEqual([
      { label: "Input tokens", values: [110, 0, 7, 1] },
      { label: "Output tokens", values: [45, 0, 9, 2] },
    ]);
  });

  test("spend: summed in micro-units, then shown in currency units", () => {
    expect(usageCharts(rows, range).spend.series).toEqual([{ label: "Spend", values: [1.75, 0, 0.000001, 0] }]);
  });

  test("no rows: every series is zeros over the whole axis, and the requests chart has no lines", () => {
    const c = usageCharts([], range);
    expect(c.requests.series).toEqual([]);
    expect(c.tokens.series.map((s) => s.values)).toEqual([[0, 0, 0, 0], [0, 0, 0, 0]]);
    expect(c.spend.x).toHaveLength(4);
  });

  test("a row outside the range is ignored", () => {
    const c = usageCharts([row("2026-01-29", "alpha", { requests: 9 }), row("2026-02-03", "gamma")], range);
    expect(c.requests.series).toEqual([]);
  });
});

describe("totals", () => {
  const rows = [
    row("2026-01-30", "alpha", { requests: 3, inputTokens: 100, cachedTokens: 64, outputTokens: 40, images: 0, costMicros: 1_000 }),
    row("2026-01-31", "alpha", { requests: 1, inputTokens: 1, cachedTokens: 1, outputTokens: 1, images: 0, costMicros: 1_000 }),
    row("2026-01-30", "img", { requests: 2, inputTokens: 20, outputTokens: 0, images: 4, costMicros: 5_000 }),
    row("2026-01-31", "free-a", { requests: 7 }),
    row("2026-01-31", "free-b", { requests: 7 }),
  ];

  test("totalsOf sums every column", () => {
    expect(totalsOf(rows)).toEqual({ requests: 20, inputTokens: 121, cachedTokens: 65, outputTokens: 41, images: 4, costMicros: 7_000 });
    expect(totalsOf([])).toEqual({ requests: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0 });
  });

  test("totalsByModel: one entry per model, most spend first, then most requests, then by name", () => {
    expect(totalsByModel(rows)).toEqual([
      { model: "img", requests: 2, inputTokens: 20, cachedTokens: 0, outputTokens: 0, images: 4, costMicros: 5_000 },
      { model: "alpha", requests: 4, inputTokens: 101, cachedTokens: 65, outputTokens: 41, images: 0, costMicros: 2_000 },
      { model: "free-a", requests: 7, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0 },
      { model: "free-b", requests: 7, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0 },
    ]);
  });

  test("totalsByTier: one entry per service tier over every model, most spend first", () => {
    const tiered = [
      row("2026-01-30", "alpha", { requests: 2, inputTokens: 10, costMicros: 40 }),
      row("2026-01-30", "alpha", { serviceTier: "batch", requests: 5, inputTokens: 50, costMicros: 100 }),
      row("2026-01-31", "beta", { serviceTier: "batch", requests: 1, inputTokens: 4, costMicros: 3 }),
      row("2026-01-31", "beta", { serviceTier: "priority", requests: 1, costMicros: 0 }),
    ];
    expect(totalsByTier(tiered)).toEqual([
      { serviceTier: "batch", requests: 6, inputTokens: 54, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 103 },
      { serviceTier: "default", requests: 2, inputTokens: 10, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 40 },
      { serviceTier: "priority", requests: 1, inputTokens: 0, cachedTokens: 0, outputTokens: 0, images: 0, costMicros: 0 },
    ]);
  });
});
