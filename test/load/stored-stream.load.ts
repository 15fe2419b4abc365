// `npm run bench -- --stored`: Responses streaming at 16 concurrent clients stored (store: true, every event written
// and resumable) against store: false, on the same server in alternating rounds; prints both rates and their ratio.
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { BENCH_DTYPES, benchServerEnv, DTYPE, ensureBenchModel, FORMATS, MODELS_DIR, NEW_TOKENS, PROMPT, ROUNDS, SPEC } from "./bench-model.ts";
import { type LevelSummary, markdownTable, medianBy, summarize } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamResponse } from "./stream-client.ts";

const CLIENTS = Number(process.env.KILN_BENCH_STORED_CLIENTS ?? 16);
/** Storing a stream may cost at most 5% of its throughput. */
const TARGET = 0.95;
/** Responses' smallest max_output_tokens. */
const TOKENS = Math.max(16, NEW_TOKENS);

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");

function table(rows: { label: string; s: LevelSummary; tokensPerStream: number }[]): string {
  const header = ["responses stream", "tok/s", "tokens/stream", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "ITL p95 ms"];
  return markdownTable(header, rows.map(({ label, s, tokensPerStream }) => [label, f1(s.outputTokPerSec), f1(tokensPerStream), f1(s.ttftP50), f1(s.ttftP95), f1(s.tpotP50), f1(s.itlP95)]));
}

test(
  "stored Responses streams keep up with unstored ones",
  async () => {
    await ensureBenchModel(DTYPE, BENCH_DTYPES);
    const threads = navigator.hardwareConcurrency;
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-stored-"), modelsDir: MODELS_DIR, env: benchServerEnv(threads) });
    const body = { model: SPEC.id, input: PROMPT, max_output_tokens: TOKENS, temperature: 0 };
    const rounds = new Map<boolean, { s: LevelSummary; tokens: number }[]>([[false, []], [true, []]]);
    let storedId = "";
    try {
      // A full round of each side first, not counted: the server's first rounds run measurably slower (JIT, caches).
      for (const store of [false, true]) await Promise.all(Array.from({ length: CLIENTS }, () => streamResponse(server.url, server.key, { ...body, store })));
      for (let r = 0; r < ROUNDS; r++) {
        // Which side goes first alternates, so a trend in the box's load favours neither.
        for (const store of r % 2 === 0 ? [false, true] : [true, false]) {
          const t0 = performance.now();
          const runs = await Promise.all(Array.from({ length: CLIENTS }, () => streamResponse(server.url, server.key, { ...body, store })));
          const s = summarize(CLIENTS, runs, performance.now() - t0);
          for (const run of runs) expect(["completed", "incomplete"]).toContain(run.status);
          if (store) storedId = runs[0]!.id;
          rounds.get(store)!.push({ s, tokens: runs.reduce((n, x) => n + x.outputTokens, 0) / CLIENTS });
          console.log(`store: ${store} round ${r + 1}: ${s.outputTokPerSec.toFixed(1)} tok/s (load ${loadavg()[0]!.toFixed(2)})`);
        }
      }
      // What was stored is whole: the stream replays from its first event to its terminal one without a gap.
      const replay = await (await fetch(`${server.url}/v1/responses/${storedId}?stream=true`, { headers: { authorization: `Bearer ${server.key}` } })).text();
      const numbers = replay.trim().split("\n\n").map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: "))!.slice(6)).sequence_number as number);
      expect(numbers).toEqual(numbers.map((_, i) => i));
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const median = (store: boolean) => medianBy(rounds.get(store)!, (x) => x.s.outputTokPerSec);
    const unstored = median(false);
    const stored = median(true);
    const ratio = stored.s.outputTokPerSec / unstored.s.outputTokPerSec;
    console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
    console.log(`model ${SPEC.id}, ${FORMATS}, max_output_tokens ${TOKENS}, temperature 0, ${threads} threads, ${CLIENTS} concurrent clients, median of ${ROUNDS} rounds each (alternating), load ${loadavg()[0]!.toFixed(2)}\n`);
    console.log(table([
      { label: "store: false", s: unstored.s, tokensPerStream: unstored.tokens },
      { label: "store: true", s: stored.s, tokensPerStream: stored.tokens },
    ]));
    console.log(`target store: true ≥ ${TARGET}× store: false at ${CLIENTS} clients: ${ratio.toFixed(2)}× (${ratio >= TARGET ? "met" : "MISSED"})`);
  },
  3_600_000,
);
