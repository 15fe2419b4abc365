// `npm run bench -- --file-burst`: a large text file (250 MB by default, KILN_BENCH_FILE_MB) uploaded to a separate
// kiln process, then N = 1, 5, 10, 20 concurrent chat requests that reference it as a `file` part (KILN_BENCH_FILE_ROUNDS
// bursts per N, 3 by default, and more until 100 status polls or 30 s), each refused with 400 (a text document that
// fits no prompt). Printed per N: the server's peak RSS growth (VmRSS sampled every 20 ms)
// over its RSS before the first burst (memory a burst keeps counts against the next) and GET /v1/status latency (p50,
// p99, max) polled every 10 ms during the bursts. Targets: RSS growth under 512 MiB and a status p99 under 50 ms at
// N = 20.
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { rssGrowth, rssMb } from "../helpers/hostile-clients.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { markdownTable, percentile } from "./metrics.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";

const SIZE = Math.round(Number(process.env.KILN_BENCH_FILE_MB ?? 250) * 1_000_000);
const LEVELS = (process.env.KILN_BENCH_FILE_BURST ?? "1,5,10,20").split(",").map(Number);
/** Bursts per level, one after another, at least: a refused burst is short, and the polls of one alone are few. */
const ROUNDS = Number(process.env.KILN_BENCH_FILE_ROUNDS ?? 3);
/** More bursts follow until this many status polls were made, for at most MAX_LEVEL_MS. */
const MIN_POLLS = 100;
const MAX_LEVEL_MS = 30_000;
const TARGET_RSS_MIB = 512;
const TARGET_P99_MS = 50;

/** Polls /v1/status every 10 ms until `work` settles; returns every latency with the work's result. */
async function whilePolling<T>(server: ServerProcess, work: (polls: () => number) => Promise<T>): Promise<{ result: T; latencies: number[] }> {
  const latencies: number[] = [];
  let running = true;
  const poller = (async () => {
    while (running) {
      const t0 = performance.now();
      await (await fetch(`${server.url}/v1/status`)).arrayBuffer();
      latencies.push(performance.now() - t0);
      await Bun.sleep(10);
    }
  })();
  try {
    return { result: await work(() => latencies.length), latencies };
  } finally {
    running = false;
    await poller;
  }
}

/** One chat request naming the file; resolves to its status and error message. */
async function chatWithFile(server: ServerProcess, model: string, fileId: string): Promise<{ status: number; message: string }> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: "user", content: [{ type: "text", text: "Summarise this." }, { type: "file", file: { file_id: fileId } }] }] }),
  });
  const body = (await res.json()) as { error?: { message: string } };
  return { status: res.status, message: body.error?.message ?? "" };
}

test(
  "N concurrent chat requests referencing a large text file: memory and /v1/status latency",
  async () => {
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-file-burst-"), modelsDir: dirname(await tinyModelDir()) });
    try {
      const headers = { authorization: `Bearer ${server.key}` };
      const model = ((await (await fetch(`${server.url}/v1/models`, { headers })).json()) as { data: { id: string }[] }).data[0]!.id;
      const upload = async (bytes: number) => {
        const res = await rawUpload(server.url, { key: server.key, bytes, text: true, filename: "big.txt", purpose: "user_data" });
        expect(res.status).toBe(200);
        return (JSON.parse(res.body) as { id: string }).id;
      };
      const fileId = await upload(SIZE);
      // One request naming a small text file first, so the route's first-use costs are not counted in the first level.
      expect((await chatWithFile(server, model, await upload(1024))).status).toBe(200);
      const startMb = await rssMb(server.pid);

      const rows: string[][] = [];
      let last = { growth: 0, p99: 0 };
      for (const n of LEVELS) {
        const t0 = performance.now();
        const { result, baseMb, growthMb } = await rssGrowth(server.pid, () =>
          whilePolling(server, async (polls) => {
            const answers = [];
            for (let round = 0; round < ROUNDS || (polls() < MIN_POLLS && performance.now() - t0 < MAX_LEVEL_MS); round++) {
              answers.push(...(await Promise.all(Array.from({ length: n }, () => chatWithFile(server, model, fileId)))));
            }
            return answers;
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const bursts = result.result.length / n;
        for (const answer of result.result) {
          expect(answer.status).toBe(400);
          expect(answer.message).toMatch(/is a text document of \d+ bytes; at most \d+ fit a prompt\.$/);
        }
        const l = result.latencies;
        const f = (v: number) => v.toFixed(1);
        const peakMb = baseMb + growthMb;
        rows.push([String(n), String(bursts), seconds.toFixed(2), baseMb.toFixed(0), peakMb.toFixed(0), (peakMb - startMb).toFixed(0), String(l.length), f(percentile(l, 50)), f(percentile(l, 99)), f(Math.max(...l))]);
        last = { growth: peakMb - startMb, p99: percentile(l, 99) };
      }

      console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
      console.log(`a text file of ${SIZE} bytes, bursts of N concurrent chat requests naming it (each refused: 400); RSS ${startMb.toFixed(0)} MiB before the first burst, load ${loadavg()[0]!.toFixed(2)}\n`);
      console.log(markdownTable(["N", "bursts", "seconds", "RSS before (MiB)", "peak RSS (MiB)", "peak RSS growth (MiB)", "status polls", "status p50 ms", "status p99 ms", "status max ms"], rows));
      console.log(`\ntargets at N = ${LEVELS.at(-1)}: RSS growth < ${TARGET_RSS_MIB} MiB (${last.growth.toFixed(0)}), status p99 < ${TARGET_P99_MS} ms (${last.p99.toFixed(1)})`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  },
  3_600_000,
);
