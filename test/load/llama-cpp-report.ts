// One table of kiln over HTTP, kiln's direct ONNX Runtime loop and llama.cpp at its best format, each with a wall-clock
// (prefill included) and a decode-only rate, and the ratios between them.
import type { DirectBenchResult } from "./direct-ort.ts";
import type { LlamaLevel, Rates } from "./llama-cpp.ts";
import type { LevelSummary } from "./metrics.ts";

/**
 * kiln over HTTP: wall = output tokens / round wall time (as the main table); decode = clients / TPOT p50, the rate at
 * which the streams advance once each has its first token, which is what (batch · (N − 1)) / (total − prefill) measures
 * for a static batch.
 */
export function kilnRates(k: LevelSummary): Rates {
  return { wall: k.outputTokPerSec, decode: (k.clients * 1000) / k.tpotP50 };
}

/** The direct loop reports wall tok/s and its prefill; its decode rate follows from them. */
export function directRates(d: DirectBenchResult, batch: number, newTokens: number): Rates {
  const totalS = (batch * newTokens) / d.tokPerSec;
  return { wall: d.tokPerSec, decode: newTokens > 1 ? (batch * (newTokens - 1)) / (totalS - d.prefillMs / 1000) : NaN };
}

export interface VersusRow {
  clients: number;
  kiln: Rates;
  direct: Rates;
  /** Absent when llama.cpp was skipped. */
  llama?: LlamaLevel;
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const ratio = (a: number, b: number | undefined) => (b !== undefined && Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "-");

export function renderVersusTable(rows: VersusRow[]): string {
  const header = [
    "clients", "kiln wall", "kiln decode", "direct wall", "direct decode", "llama.cpp", "llama wall", "llama decode",
    "kiln/llama wall", "kiln/llama decode", "kiln/direct wall", "direct/llama wall",
  ];
  const body = rows.map((r) => [
    String(r.clients), f1(r.kiln.wall), f1(r.kiln.decode), f1(r.direct.wall), f1(r.direct.decode),
    r.llama ? r.llama.format.toUpperCase() : "skipped", f1(r.llama?.wall ?? NaN), f1(r.llama?.decode ?? NaN),
    ratio(r.kiln.wall, r.llama?.wall), ratio(r.kiln.decode, r.llama?.decode), ratio(r.kiln.wall, r.direct.wall), ratio(r.direct.wall, r.llama?.wall),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padStart(widths[i]!)).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...body.map(line)].join("\n");
}

/** The issue's llama.cpp targets, each with its measured ratio on the same (wall-clock) accounting. */
export function versusTargetLines(rows: VersusRow[], llamaAll: LlamaLevel[]): string[] {
  const first = rows[0]!, last = rows[rows.length - 1]!;
  if (!last.llama) return [];
  const mark = (ok: boolean) => (ok ? "met" : "MISSED");
  const q4At1 = llamaAll.find((l) => l.format === "q4_0" && l.batch === first.clients);
  const raced = rows.filter((r): r is VersusRow & { llama: LlamaLevel } => r.llama !== undefined);
  const everyLevel = raced.every((r) => r.kiln.wall >= r.llama.wall);
  const lines = [`target kiln ≥ 1.0× llama.cpp best at every level (wall): ${raced.map((r) => `@${r.clients} ${ratio(r.kiln.wall, r.llama.wall)}`).join(", ")} (${mark(everyLevel)})`];
  // The issue sets 1.5× at 16 clients; a sitting of fewer levels (KILN_BENCH_LEVELS) does not hold its top one to it.
  const at16 = raced.find((r) => r.clients === 16);
  if (at16) lines.push(`target kiln@16 ≥ 1.5× llama.cpp best@16: ${ratio(at16.kiln.wall, at16.llama.wall)} (${mark(at16.kiln.wall >= 1.5 * at16.llama.wall)})`);
  if (q4At1) lines.push(`target kiln@${first.clients} ≥ 1.0× llama.cpp Q4_0@${first.clients}: ${ratio(first.kiln.wall, q4At1.wall)} (${mark(first.kiln.wall >= q4At1.wall)})`);
  lines.push(`target kiln@${first.clients} ≥ 0.95× direct@${first.clients}: ${ratio(first.kiln.wall, first.direct.wall)} (${mark(first.kiln.wall >= 0.95 * first.direct.wall)})`);
  return lines;
}

/** Every format llama.cpp ran, so the choice of "best" can be checked. */
export function llamaFormatsLine(all: LlamaLevel[]): string {
  const formats = [...new Set(all.map((l) => l.format))];
  return formats
    .map((f) => `llama.cpp ${f.toUpperCase()} wall/decode tok/s: ${all.filter((l) => l.format === f).map((l) => `@${l.batch} ${f1(l.wall)}/${f1(l.decode)}`).join(", ")}`)
    .join("\n");
}
