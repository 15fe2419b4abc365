// The long-prompt scenario: 2,000-token prompts at 1 and 8 rows, for kiln's direct loop, kiln's engine (its in-place
// cache and chunked prefill, as the server runs them) and llama.cpp: prefill tok/s, and how a decode step's time grows
// from a short context to a long one.
import type { SmallStepFormat } from "../../src/models/step-formats.ts";
import { directDecodeBench } from "./direct-ort.ts";
import { engineLongRun, loadEngineModel } from "./engine-inproc.ts";
import type { LlamaCppModel } from "./llama-cpp.ts";
import { percentile } from "./metrics.ts";

export interface LongRow {
  who: string;
  batch: number;
  promptTokens: number;
  prefillMs: number;
  /** Median decode step with the long prompt in the cache. */
  stepMsP50: number;
  /** Median decode step of the main (short-prompt) run at the same batch, when it ran that batch. */
  shortStepMsP50?: number;
}

/** The direct loop's prompt (test/load/direct-ort.ts), so both runtimes see the same token ids. */
export function syntheticPrompt(length: number, vocab: number): number[] {
  return Array.from({ length }, (_, i) => (i * 31 + 7) % Math.min(vocab, 2000));
}

export interface LongOptions {
  promptTokens: number;
  /** The main run's prompt length, for the engine's own short-context step. */
  shortPromptTokens: number;
  levels: number[];
  newTokens: number;
  threads: number;
  vocab: number;
  direct: { modelDir: string; dtype: string; small?: SmallStepFormat; shortStepMs: Map<number, number> };
  /** llama.cpp's model, run in turn with kiln's engine (its short step is measured beside the engine's, not taken from the race). */
  llama?: { model: LlamaCppModel };
  /** How many times kiln's engine and llama.cpp each run every level, in turn (medians are reported). */
  rounds: number;
}

/**
 * The direct loop once per level (the bare reference for prefill); kiln's engine and llama.cpp in turn, `rounds` times,
 * each with the short prompt and then the long one, so both meet the same drift of a shared box. A decode step's
 * figure is a few ms, and one run after the race swung by a third on a 2-core box.
 */
export async function longPromptRows(o: LongOptions): Promise<LongRow[]> {
  const rows: LongRow[] = [];
  const { modelDir, dtype, small } = o.direct;
  const formats = small ? `${dtype}+${small.dtype}` : dtype;
  for (const batch of o.levels) {
    const d = await directDecodeBench({ modelDir, dtype, small, batch, promptTokens: o.promptTokens, newTokens: o.newTokens, threads: o.threads, rounds: 1 });
    rows.push({ who: `kiln direct (${formats})`, batch, promptTokens: o.promptTokens, prefillMs: d.prefillMs, stepMsP50: d.stepMsP50, shortStepMsP50: o.direct.shortStepMs.get(batch) });
    console.log(`long prompt: direct batch ${batch}: prefill ${d.prefillMs.toFixed(0)} ms, step p50 ${d.stepMsP50.toFixed(1)} ms`);
  }
  const shortPrompt = syntheticPrompt(o.shortPromptTokens, o.vocab);
  const prompt = syntheticPrompt(o.promptTokens, o.vocab);
  const runs: LongRow[] = [];
  const engine = await loadEngineModel(modelDir, dtype, o.threads, small);
  try {
    for (let round = 1; round <= Math.max(1, o.rounds); round++) {
      for (const batch of o.levels) {
        const short = await engineLongRun(engine, shortPrompt, batch, o.newTokens);
        const long = await engineLongRun(engine, prompt, batch, o.newTokens);
        runs.push({ who: `kiln engine (${formats})`, batch, promptTokens: o.promptTokens, prefillMs: long.prefillMs, stepMsP50: long.stepMsP50, shortStepMsP50: short.stepMsP50 });
        console.log(`long prompt, round ${round}: engine batch ${batch}: prefill ${long.prefillMs.toFixed(0)} ms, step p50 ${long.stepMsP50.toFixed(1)} ms (${short.stepMsP50.toFixed(1)} ms at ${o.shortPromptTokens})`);
        if (!o.llama) continue;
        // One prompt on every row, as the direct loop and the engine run it: none of them shares KV between rows (the
        // engine is given no prefix scope, so its prefix cache stays out; llama.cpp's rows keep their own cells, cleared
        // each run).
        const s = await o.llama.model.run(Array.from({ length: batch }, () => shortPrompt), o.newTokens, 1);
        const t = await o.llama.model.run(Array.from({ length: batch }, () => prompt), o.newTokens, 1);
        const p50 = (ms: number[]) => (ms.length ? percentile(ms, 50) : NaN);
        runs.push({ who: `llama.cpp (${o.llama.model.format.toUpperCase()})`, batch, promptTokens: o.promptTokens, prefillMs: t.prefillMs, stepMsP50: p50(t.stepMs), shortStepMsP50: p50(s.stepMs) });
        console.log(`long prompt, round ${round}: llama.cpp batch ${batch}: prefill ${t.prefillMs.toFixed(0)} ms, step p50 ${p50(t.stepMs).toFixed(1)} ms (${p50(s.stepMs).toFixed(1)} ms at ${o.shortPromptTokens})`);
      }
    }
  } finally {
    await engine.dispose();
  }
  return [...rows, ...medianRows(runs)];
}

/** One row per runtime and row count: the median of its runs' prefill, long step and short step, in first-seen order. */
export function medianRows(runs: LongRow[]): LongRow[] {
  const groups = new Map<string, LongRow[]>();
  for (const r of runs) {
    const key = `${r.who}\0${r.batch}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const median = (xs: number[]) => (xs.length ? percentile(xs, 50) : NaN);
  const order = (a: LongRow, b: LongRow) => Number(a.who.startsWith("llama")) - Number(b.who.startsWith("llama")) || a.batch - b.batch;
  return [...groups.values()]
    .map((g) => {
      const shorts = g.flatMap((r) => (r.shortStepMsP50 !== undefined && Number.isFinite(r.shortStepMsP50) ? [r.shortStepMsP50] : []));
      return { ...g[0]!, prefillMs: median(g.map((r) => r.prefillMs)), stepMsP50: median(g.map((r) => r.stepMsP50)), shortStepMsP50: shorts.length ? median(shorts) : undefined };
    })
    .sort(order);
}

const f1 = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(1) : "-");

export function renderLongTable(rows: LongRow[], shortPromptTokens: number): string {
  const header = ["runtime", "rows", "prompt", "prefill ms", "prefill tok/s", `step ms @${shortPromptTokens}`, "step ms @long", "step growth"];
  const body = rows.map((r) => [
    r.who, String(r.batch), String(r.promptTokens), f1(r.prefillMs), f1((r.batch * r.promptTokens) / (r.prefillMs / 1000)),
    f1(r.shortStepMsP50), f1(r.stepMsP50), r.shortStepMsP50 ? `${(r.stepMsP50 / r.shortStepMsP50).toFixed(2)}×` : "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...body.map(line)].join("\n");
}

/** The long-prompt target: kiln's prefill rate against llama.cpp's at the same row count. */
export function longTargetLines(rows: LongRow[]): string[] {
  const rate = (r: LongRow) => (r.batch * r.promptTokens) / r.prefillMs;
  // The engine's rows are left out: its chunked lane prefills one long prompt at a time by design (decoding the rows
  // already started meanwhile), while the direct loop and llama.cpp prefill every row in one batch.
  return rows
    .filter((r) => r.who.startsWith("kiln direct"))
    .flatMap((k) => {
      const l = rows.find((r) => r.who.startsWith("llama") && r.batch === k.batch);
      if (!l) return [];
      const x = rate(k) / rate(l);
      return [`target kiln prefill ≥ 1.0× llama.cpp at ${k.batch}×${k.promptTokens}: ${x.toFixed(2)}× (${x >= 1 ? "met" : "MISSED"})`];
    })
    .concat(decodeTargetLines(rows));
}

/**
 * The decode targets at a long context: kiln's engine (the server's cache handling) takes a step no slower than
 * llama.cpp with the long prompt cached, and its step grows from the short context no more than llama.cpp's.
 */
function decodeTargetLines(rows: LongRow[]): string[] {
  const mark = (ok: boolean) => (ok ? "met" : "MISSED");
  return rows
    .filter((r) => r.who.startsWith("kiln engine"))
    .flatMap((k) => {
      const l = rows.find((r) => r.who.startsWith("llama") && r.batch === k.batch);
      if (!l || !Number.isFinite(l.stepMsP50)) return [];
      const out = [`target kiln decode step at ${k.promptTokens} tokens of context ≤ llama.cpp's, ${k.batch} row(s): ${k.stepMsP50.toFixed(1)} vs ${l.stepMsP50.toFixed(1)} ms (${mark(k.stepMsP50 <= l.stepMsP50)})`];
      if (k.shortStepMsP50 && l.shortStepMsP50) {
        const kg = k.stepMsP50 / k.shortStepMsP50, lg = l.stepMsP50 / l.shortStepMsP50;
        out.push(`target kiln step growth from the short context ≤ llama.cpp's, ${k.batch} row(s): ${kg.toFixed(2)}× vs ${lg.toFixed(2)}× (${mark(kg <= lg)})`);
      }
      return out;
    });
}
