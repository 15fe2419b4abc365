// The --gguf bench's table: kiln over HTTP against llama.cpp on the same GGUF file, level by level, and the issue's
// targets (speed at the fewest and most clients, peak RSS) each marked met or not met.
import type { LlamaLevelResult } from "./gguf-llama.ts";
import { kilnRates } from "./llama-cpp-report.ts";
import type { LevelSummary } from "./metrics.ts";

export interface GgufLevel {
  clients: number;
  kiln: LevelSummary;
  llama: LlamaLevelResult;
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "-");
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "-");

export function renderGgufTable(rows: GgufLevel[]): string {
  const header = [
    "clients", "kiln wall", "llama wall", "kiln/llama wall", "kiln decode", "llama decode", "kiln/llama decode",
    "kiln TTFT p50", "kiln TTFT p95", "llama TTFT p50", "llama TTFT p95",
  ];
  const body = rows.map(({ clients, kiln, llama }) => {
    const k = kilnRates(kiln);
    return [
      String(clients), f1(k.wall), f1(llama.wall), ratio(k.wall, llama.wall), f1(k.decode), f1(llama.decode), ratio(k.decode, llama.decode),
      f0(kiln.ttftP50), f0(kiln.ttftP95), f0(llama.prefillMs), f0(llama.prefillMs),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padStart(widths[i]!)).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...body.map(line)].join("\n");
}

export interface RssFigures {
  /** kiln's peak with the prefix cache off (the memory target's condition). */
  kilnMb: number;
  /** kiln's resident memory after loading, before the first request, cache off. */
  kilnIdleMb: number;
  /** The same requests again on a server with the prefix cache on: its budget and the peak it reached (null: not run). */
  cacheOn: { budgetMib: number | null; peakMb: number } | null;
  llamaMb: number;
  llamaAfterLoadMb: number;
}

export function rssLine(r: RssFigures): string[] {
  const lines = [
    `peak RSS, prefix cache off: kiln server process ${f0(r.kilnMb)} MB (${f0(r.kilnIdleMb)} MB after loading, before any request); llama.cpp child process ${f0(r.llamaMb)} MB (${f0(r.llamaAfterLoadMb)} MB after loading the file); kiln/llama.cpp ${ratio(r.kilnMb, r.llamaMb)}`,
  ];
  if (r.cacheOn) {
    const budget = r.cacheOn.budgetMib === null ? "budget not reported" : `budget ${r.cacheOn.budgetMib} MiB per worker, the default`;
    lines.push(`peak RSS, prefix cache on (${budget}), the same requests: kiln ${f0(r.cacheOn.peakMb)} MB; the cache's share ${f0(r.cacheOn.peakMb - r.kilnMb)} MB; kiln/llama.cpp ${ratio(r.cacheOn.peakMb, r.llamaMb)}`);
  }
  return lines;
}

/** The three targets, on wall-clock rates: ≥ 1× llama.cpp at the fewest clients, ≥ 1.5× at the most, RSS ≤ 1.3×. */
export function ggufTargetLines(rows: GgufLevel[], rss: RssFigures): string[] {
  const mark = (ok: boolean) => (ok ? "met" : "not met");
  const first = rows[0]!, last = rows[rows.length - 1]!;
  const speed = (r: GgufLevel) => kilnRates(r.kiln).wall / r.llama.wall;
  const rssRatio = rss.kilnMb / rss.llamaMb;
  return [
    `target kiln@${first.clients} ≥ 1.0× llama.cpp@${first.clients} (wall): ${speed(first).toFixed(2)}× (${mark(speed(first) >= 1)})`,
    `target kiln@${last.clients} ≥ 1.5× llama.cpp@${last.clients} (wall): ${speed(last).toFixed(2)}× (${mark(speed(last) >= 1.5)})`,
    `target kiln peak RSS (prefix cache off) ≤ 1.3× llama.cpp's: ${rssRatio.toFixed(2)}× (${mark(rssRatio <= 1.3)})`,
  ];
}
