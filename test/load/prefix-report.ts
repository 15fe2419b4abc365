// The prefix-cache bench's table and target lines (`npm run bench -- --prefix`): each measure with the cache on and
// off, and "n/a" wherever the server did not report a figure (a metric or usage field it lacks).
import { markdownTable, percentile } from "./metrics.ts";
import { type Sample, seriesValue } from "./prom-text.ts";

/** One multi-turn conversation on one server. */
export interface Conversation {
  /** TTFT of each turn, in order. */
  ttftMs: number[];
  /** cached_tokens (or cache_read_input_tokens) the last turn reported. */
  cachedLast?: number;
  /** Growth of kiln_prefill_tokens_total over the conversation. */
  prefillTokens?: number;
}

/**
 * Several conversations of the same shape as one: each turn's median TTFT (one slow turn on a shared box must not
 * decide a turn-10 / turn-1 ratio), the first one's cached and prefill counts.
 */
export function medianConversation(runs: readonly Conversation[]): Conversation {
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const turns = Math.min(...runs.map((r) => r.ttftMs.length));
  return { ...runs[0]!, ttftMs: Array.from({ length: turns }, (_, i) => mid(runs.map((r) => r.ttftMs[i]!))) };
}

/** The clients sharing one system prompt, all sent at once, on one server. */
export interface Shared {
  ttftMs: number[];
  prefillTokens?: number;
  /** Sum of the clients' cached_tokens. */
  cachedTokens?: number;
}

export interface FreshLevel {
  clients: number;
  /** kiln's output tok/s (median round) with the cache on and off. */
  on: number;
  off: number;
  /** llama.cpp's best format at the same rows, wall-clock rate (prefill included). */
  llama?: { wall: number; format: string };
}

export interface OnOff<T> {
  on: T;
  off: T;
}

export interface PrefixResults {
  responses: OnOff<Conversation>;
  messages: OnOff<Conversation>;
  shared: OnOff<Shared>;
  sharedClients: number;
  systemTokens: number;
  fresh: FreshLevel[];
}

/** Targets of the issue ("Never compute the same prompt twice"). */
export const TARGETS = { turnGrowth: 1.2, prefillCut: 0.9, ttftP95Gain: 3, freshCost: 0.97 } as const;

const known = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);
const fixed = (v: number | undefined, digits = 1) => (known(v) ? v.toFixed(digits) : "n/a");
const times = (v: number | undefined) => (known(v) ? `${v.toFixed(2)}×` : "n/a");
const tokens = (v: number | undefined) => (known(v) ? String(Math.round(v)) : "n/a");
const div = (a: number | undefined, b: number | undefined) => (known(a) && known(b) && b !== 0 ? a / b : undefined);

/** TTFT of the last turn over the first. */
export function turnGrowth(c: Conversation): number | undefined {
  return div(c.ttftMs[c.ttftMs.length - 1], c.ttftMs[0]);
}

/** The share of prefill tokens the cache saved: 1 − on/off. */
export function prefillCut(s: OnOff<{ prefillTokens?: number }>): number | undefined {
  const r = div(s.on.prefillTokens, s.off.prefillTokens);
  return r === undefined ? undefined : 1 - r;
}

const p95 = (s: Shared) => (s.ttftMs.length ? percentile(s.ttftMs, 95) : undefined);
const cut = (v: number | undefined) => (known(v) ? `${(v * 100).toFixed(1)}% fewer` : "n/a");

function conversationRows(label: string, c: OnOff<Conversation>): string[][] {
  const n = Math.max(c.on.ttftMs.length, c.off.ttftMs.length);
  const first = (x: Conversation) => x.ttftMs[0];
  const last = (x: Conversation) => x.ttftMs[n - 1];
  return [
    [`${label}: TTFT turn 1 ms`, fixed(first(c.on)), fixed(first(c.off)), `off/on ${times(div(first(c.off), first(c.on)))}`, "", ""],
    [`${label}: TTFT turn ${n} ms`, fixed(last(c.on)), fixed(last(c.off)), `off/on ${times(div(last(c.off), last(c.on)))}`, "", ""],
    [`${label}: TTFT turn ${n} / turn 1`, times(turnGrowth(c.on)), times(turnGrowth(c.off)), "", "", `on ≤ ${TARGETS.turnGrowth}×`],
    [`${label}: cached tokens at turn ${n}`, tokens(c.on.cachedLast), tokens(c.off.cachedLast), "", "", ""],
    [`${label}: prefill tokens computed`, tokens(c.on.prefillTokens), tokens(c.off.prefillTokens), cut(prefillCut(c)), "", ""],
  ];
}

export function prefixRows(r: PrefixResults): string[][] {
  const shared = `${r.sharedClients} clients, one ${r.systemTokens}-token system prompt`;
  const { on, off } = r.shared;
  const p50 = (s: Shared) => (s.ttftMs.length ? percentile(s.ttftMs, 50) : undefined);
  return [
    ...conversationRows("Responses previous_response_id", r.responses),
    ...conversationRows("Messages history re-sent", r.messages),
    [`${shared}: prefill tokens computed`, tokens(on.prefillTokens), tokens(off.prefillTokens), cut(prefillCut(r.shared)), "", `≥ ${TARGETS.prefillCut * 100}% fewer`],
    [`${shared}: cached tokens, all clients`, tokens(on.cachedTokens), tokens(off.cachedTokens), "", "", ""],
    [`${shared}: TTFT p50 ms`, fixed(p50(on)), fixed(p50(off)), `off/on ${times(div(p50(off), p50(on)))}`, "", ""],
    [`${shared}: TTFT p95 ms`, fixed(p95(on)), fixed(p95(off)), `off/on ${times(div(p95(off), p95(on)))}`, "", `off/on ≥ ${TARGETS.ttftP95Gain}×`],
    ...r.fresh.map((f) => [
      `fresh prompts, ${f.clients} client${f.clients === 1 ? "" : "s"}: output tok/s`, fixed(f.on), fixed(f.off), `on/off ${times(div(f.on, f.off))}`,
      f.llama ? `${fixed(f.llama.wall)} ${f.llama.format.toUpperCase()}` : "skipped", `on/off ≥ ${TARGETS.freshCost}×`,
    ]),
  ];
}

export function renderPrefixTable(r: PrefixResults): string {
  return markdownTable(["measure", "cache on", "cache off", "on vs off", "llama.cpp", "target"], prefixRows(r));
}

function target(what: string, v: number | undefined, shown: string, ok: (v: number) => boolean, missing: string): string {
  return `target ${what}: ${known(v) ? `${shown} (${ok(v) ? "met" : "MISSED"})` : `n/a (${missing})`}`;
}

/** Whether each target is met, with its figure; "n/a" with the reason when a figure is missing. */
export function prefixTargetLines(r: PrefixResults): string[] {
  const lines: string[] = [];
  for (const [label, c] of [["Responses previous_response_id", r.responses], ["Messages history re-sent", r.messages]] as const) {
    const g = turnGrowth(c.on);
    lines.push(target(`${label} TTFT turn ${c.on.ttftMs.length} ≤ ${TARGETS.turnGrowth}× turn 1 with the cache`, g, times(g), (v) => v <= TARGETS.turnGrowth, "no TTFT"));
  }
  const c = prefillCut(r.shared);
  lines.push(target(`shared system prompt: ≥ ${TARGETS.prefillCut * 100}% fewer prefill tokens computed with the cache`, c, cut(c), (v) => v >= TARGETS.prefillCut, "kiln_prefill_tokens_total not reported"));
  const g = div(p95(r.shared.off), p95(r.shared.on));
  lines.push(target(`shared system prompt: TTFT p95 off/on ≥ ${TARGETS.ttftP95Gain}×`, g, times(g), (v) => v >= TARGETS.ttftP95Gain, "no TTFT"));
  for (const f of r.fresh) {
    const x = div(f.on, f.off);
    lines.push(target(`fresh prompts @${f.clients}: cache on ≥ ${TARGETS.freshCost}× off (within 3%)`, x, times(x), (v) => v >= TARGETS.freshCost, "no throughput"));
  }
  return lines;
}

/** A server's cache gauges and counters from a scrape, for one model; "n/a" for any the server does not export. */
export function cacheLine(label: string, samples: readonly Sample[], model: string): string {
  const v = (name: string) => seriesValue(samples, name, { model });
  const bytes = v("kiln_prefix_cache_bytes");
  return (
    `${label}: prefix cache blocks ${tokens(v("kiln_prefix_cache_blocks"))}, ${known(bytes) ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : "n/a MiB"}, ` +
    `evictions ${tokens(v("kiln_prefix_cache_evictions_total"))}, hit ratio ${fixed(v("kiln_prefix_cache_hit_ratio"), 3)}, ` +
    `prompt/hit tokens ${tokens(v("kiln_prefix_cache_prompt_tokens_total"))}/${tokens(v("kiln_prefix_cache_hit_tokens_total"))}, ` +
    `prefill tokens ${tokens(v("kiln_prefill_tokens_total"))}`
  );
}
