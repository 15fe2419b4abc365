// Serving metrics as the field defines them (TTFT, TPOT, ITL, throughput) and the benchmark's table.

export interface StreamTiming {
  /** ms from sending the request to the first content chunk. */
  ttftMs: number;
  /** ms from sending the request to the end of the stream. */
  e2eMs: number;
  /** Arrival times (ms since the request was sent) of chunks that carried generated text. */
  chunkTimesMs: number[];
  outputTokens: number;
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** TPOT = (latency − TTFT) / (output tokens − 1); undefined for single-token answers. */
export function tpot(t: StreamTiming): number | null {
  return t.outputTokens > 1 ? (t.e2eMs - t.ttftMs) / (t.outputTokens - 1) : null;
}

/** Gaps between consecutive content chunks. */
export function interTokenGaps(t: StreamTiming): number[] {
  const gaps: number[] = [];
  for (let i = 1; i < t.chunkTimesMs.length; i++) gaps.push(t.chunkTimesMs[i]! - t.chunkTimesMs[i - 1]!);
  return gaps;
}

/** The element whose key is the median (the lower middle for an even count): one round that stands for several. */
export function medianBy<T>(items: T[], key: (item: T) => number): T {
  if (!items.length) throw new Error("medianBy of nothing");
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

export interface LevelSummary {
  clients: number;
  outputTokPerSec: number;
  ttftP50: number;
  ttftP95: number;
  tpotP50: number;
  itlP95: number;
  requests: number;
}

export function summarize(clients: number, timings: StreamTiming[], wallMs: number): LevelSummary {
  const tokens = timings.reduce((s, t) => s + t.outputTokens, 0);
  const tpots = timings.map(tpot).filter((v): v is number => v !== null);
  return {
    clients,
    outputTokPerSec: tokens / (wallMs / 1000),
    ttftP50: percentile(timings.map((t) => t.ttftMs), 50),
    ttftP95: percentile(timings.map((t) => t.ttftMs), 95),
    tpotP50: percentile(tpots, 50),
    itlP95: percentile(timings.flatMap(interTokenGaps), 95),
    requests: timings.length,
  };
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");

export interface LevelRow {
  /** Bare ONNX Runtime loop, tok/s. */
  direct: number;
  /** kiln's engine in process (no worker, HTTP or SSE), tok/s. */
  engine: number;
  kiln: LevelSummary;
}

export function renderTable(rows: LevelRow[], peakRssMb: number, selfBase: number): string {
  const header = ["clients/batch", "direct tok/s", "engine tok/s", "kiln tok/s", "kiln/direct", "×kiln@1", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "ITL p95 ms"];
  const body = rows.map(({ direct, engine, kiln }) => [
    String(kiln.clients), f1(direct), f1(engine), f1(kiln.outputTokPerSec), (kiln.outputTokPerSec / direct).toFixed(2),
    (kiln.outputTokPerSec / selfBase).toFixed(2), f1(kiln.ttftP50), f1(kiln.ttftP95), f1(kiln.tpotP50), f1(kiln.itlP95),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padStart(widths[i]!)).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...body.map(line), `peak server RSS: ${peakRssMb.toFixed(0)} MB`].join("\n");
}

/**
 * The issue's targets at the highest level, each with its measured ratio and whether it is met: two throughput ones
 * and, given the direct loop's prefill of that many prompts at once, TTFT p95 within twice that prefill.
 */
/** kiln over HTTP against its own engine in process, at every level (the server's cost above its engine). */
export function httpOverEngineLine(rows: Pick<LevelRow, "engine" | "kiln">[]): string {
  const ratios = rows.map((r) => ({ clients: r.kiln.clients, x: r.kiln.outputTokPerSec / r.engine }));
  const all = ratios.every((r) => r.x >= 0.95);
  return `target kiln over HTTP ≥ 0.95× its engine in process at every level: ${ratios.map((r) => `@${r.clients} ${r.x.toFixed(2)}×`).join(", ")} (${all ? "met" : "MISSED"})`;
}

export function targetLines(rows: Pick<LevelRow, "direct" | "kiln">[], directPrefillMs?: number): string[] {
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const n = last.kiln.clients;
  const vsDirect = last.kiln.outputTokPerSec / last.direct;
  const vsSelf = last.kiln.outputTokPerSec / first.kiln.outputTokPerSec;
  const mark = (ok: boolean) => (ok ? "met" : "MISSED");
  return [
    `target kiln@${n} ≥ 0.85× direct@${n}: ${vsDirect.toFixed(2)}× (${mark(vsDirect >= 0.85)})`,
    `target kiln@${n} ≥ 4× kiln@${first.kiln.clients}: ${vsSelf.toFixed(2)}× (${mark(vsSelf >= 4)})`,
    ...(directPrefillMs !== undefined
      ? [`target TTFT p95@${n} ≤ 2× direct ${n}-prompt prefill: ${last.kiln.ttftP95.toFixed(0)} ms vs 2 × ${directPrefillMs.toFixed(0)} ms, ${(last.kiln.ttftP95 / directPrefillMs).toFixed(2)}× (${mark(last.kiln.ttftP95 <= 2 * directPrefillMs)})`]
      : []),
  ];
}

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...rows.map(line)].join("\n");
}
