// `npm run bench -- --batch`: interactive chat (KILN_BENCH_BATCH_CLIENTS, 4, streaming, fresh prompts) first alone and
// then beside a running batch of KILN_BENCH_BATCH_LINES (2,000) chat lines created through /v1/batches
// (KILN_BENCH_BATCH_LOAD=flex sends them as flex requests instead, KILN_BENCH_BATCH_INFLIGHT (32) at a time:
// test/load/batch-lane.ts); and the batch lane's throughput
// while no interactive request runs, against the same server's 16-client interactive throughput. Both on the bench
// model (KILN_BENCH_PRESET, KILN_BENCH_DTYPE), KILN_BENCH_TOKENS new tokens per request, KILN_BENCH_ROUNDS rounds.
import { expect, test } from "bun:test";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { batchLines, flexLines, type LaneLoad } from "./batch-lane.ts";
import { BENCH_DTYPES, benchServerEnv, DTYPE, ensureBenchModel, FORMATS, MODELS_DIR, NEW_TOKENS, ROUNDS, SPEC } from "./bench-model.ts";
import { freshChat } from "./fresh-chat.ts";
import { markdownTable, medianBy, type StreamTiming, summarize } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

const CLIENTS = Number(process.env.KILN_BENCH_BATCH_CLIENTS ?? 4);
const LINES = Number(process.env.KILN_BENCH_BATCH_LINES ?? 2000);
const INFLIGHT = Number(process.env.KILN_BENCH_BATCH_INFLIGHT ?? 32);
/** "batch" (default): a real batch through /v1/batches; "flex": the same lines as flex requests. */
const LOAD = process.env.KILN_BENCH_BATCH_LOAD === "flex" ? "flex" : "batch";
/** Lines the batch lane completes alone before its throughput window starts (its ramp-up) and within that window. */
const WARM_LINES = Math.min(INFLIGHT, Math.floor(LINES / 8));
const WINDOW_LINES = Math.max(1, Math.floor(LINES / 4));

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const mark = (ok: boolean) => (ok ? "met" : "MISSED");

/** Lines completed in [from, to), as output tokens per second. */
function laneRate(load: LaneLoad, from: number, to: number): number {
  return (load.completedAt.filter((t) => t >= from && t < to).length * NEW_TOKENS) / ((to - from) / 1000);
}

test(
  "batch lane: interactive TTFT beside a running batch, and the batch lane's throughput",
  async () => {
    const modelDir = await ensureBenchModel(DTYPE, BENCH_DTYPES);
    const threads = navigator.hardwareConcurrency;
    const fresh = await freshChat(await loadTokenizer(readModelFolder(modelDir, SPEC.id)));
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-batch-"), modelsDir: MODELS_DIR, env: benchServerEnv(threads) });
    const body = () => ({ model: SPEC.id, messages: [{ role: "user", content: fresh.next() }], max_tokens: NEW_TOKENS, temperature: 0, ignore_eos: true });
    /** ROUNDS rounds of `clients` concurrent streams: every request's timing, and the median round's rate. */
    const interactive = async (clients: number) => {
      const all: StreamTiming[] = [];
      const rates: number[] = [];
      /** Each round's slowest first token: a round's clients arrive together, so they share what they waited for. */
      const worst: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = performance.now();
        const timings = await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body())));
        for (const t of timings) expect(t.outputTokens).toBe(NEW_TOKENS);
        rates.push(summarize(clients, timings, performance.now() - t0).outputTokPerSec);
        worst.push(Math.max(...timings.map((t) => t.ttftMs)));
        all.push(...timings);
      }
      return { ...summarize(clients, all, 1), outputTokPerSec: medianBy(rates, (x) => x), worst };
    };
    try {
      await streamChat(server.url, server.key, { ...body(), max_tokens: 4 }); // warm-up
      const alone = await interactive(CLIENTS);
      const sixteen = await interactive(16);
      console.log(`interactive alone: TTFT p95 ${f1(alone.ttftP95)} ms; 16 clients: ${f1(sixteen.outputTokPerSec)} tok/s`);

      const load = (LOAD === "flex" ? flexLines : batchLines)({ url: server.url, key: server.key, model: SPEC.id, prompt: fresh.next, lines: LINES, maxTokens: NEW_TOKENS, inflight: INFLIGHT });
      const failed = load.done.catch((e: unknown) => e);
      const timeoutMs = 3_600_000;
      await waitFor(() => load.completedAt.length >= WARM_LINES, { what: `${WARM_LINES} batch-lane lines (ramp-up)`, timeoutMs });
      const windowStart = performance.now();
      await waitFor(() => load.completedAt.length >= WARM_LINES + WINDOW_LINES, { what: `${WINDOW_LINES} more batch-lane lines`, timeoutMs });
      const laneAlone = laneRate(load, windowStart, performance.now());
      console.log(`batch lane alone: ${f1(laneAlone)} tok/s over ${WINDOW_LINES} lines`);

      const besideStart = performance.now();
      const beside = await interactive(CLIENTS);
      const besideEnd = performance.now();
      const laneBeside = laneRate(load, besideStart, besideEnd);
      // The interactive rounds must have run beside the load the whole time, or "beside" means nothing.
      const stillRunning = load.completedAt.length < LINES;
      load.stop();
      const err = await failed;
      if (err) throw err;

      console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
      console.log(`model ${SPEC.id}, ${FORMATS}, ${NEW_TOKENS} new tokens per request, ${threads} threads, ${ROUNDS} rounds of ${CLIENTS} interactive clients (fresh prompts)`);
      const what = LOAD === "flex" ? `${LINES} lines of service_tier flex (the lane batches share), ${INFLIGHT} in flight` : `one batch of ${LINES} chat lines through /v1/batches (run by the server's batch runner)`;
      console.log(`batch lane: ${what}; ${load.completedAt.length} completed when the bench stopped it\n`);
      const row = (phase: string, clients: string, s: { ttftP50: number; ttftP95: number; tpotP50: number } | null, tokPerSec: number) =>
        [phase, clients, s ? f1(s.ttftP50) : "-", s ? f1(s.ttftP95) : "-", s ? f1(s.tpotP50) : "-", f1(tokPerSec)];
      console.log(markdownTable(["phase", "clients", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "tok/s"], [
        row("interactive alone", String(CLIENTS), alone, alone.outputTokPerSec),
        row("interactive beside the batch", String(CLIENTS), beside, beside.outputTokPerSec),
        row("interactive, 16 clients", "16", sixteen, sixteen.outputTokPerSec),
        row("batch lane, no interactive", LOAD === "flex" ? `${INFLIGHT} lines` : "batch", null, laneAlone),
        row("batch lane, beside interactive", LOAD === "flex" ? `${INFLIGHT} lines` : "batch", null, laneBeside),
      ]));
      console.log(`slowest TTFT of each round, ms: alone ${alone.worst.map(f1).join(", ")}; beside the batch ${beside.worst.map(f1).join(", ")}`);
      const ttft = beside.ttftP95 / alone.ttftP95;
      const through = laneAlone / sixteen.outputTokPerSec;
      console.log(`target TTFT p95 beside the batch ≤ 1.25× alone: ${f1(beside.ttftP95)} ms vs ${f1(alone.ttftP95)} ms, ${ttft.toFixed(2)}× (${mark(ttft <= 1.25)})`);
      console.log(`target batch throughput (no interactive) ≥ 0.9× 16-client: ${f1(laneAlone)} vs ${f1(sixteen.outputTokPerSec)} tok/s, ${through.toFixed(2)}× (${mark(through >= 0.9)})`);
      if (!stillRunning) console.log(`the batch ended before the interactive rounds did: raise KILN_BENCH_BATCH_LINES for a fair "beside" figure`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  },
  3_600_000,
);
