// Probes kiln's edge as a hostile client would and prints figures: `bun test/load/edge-probe.ts`.
// 1: an unauthenticated 512 MiB chunked upload (status, server RSS growth). 2: a 20 MB prompt, a maximal 4 MiB one
// and 100,000 nested `[` with a key (time to answer, worst /v1/status latency meanwhile, polled from a separate
// process). 6: 300 half-sent requests of three kinds (how many are still open later).
import { dirname } from "node:path";
import { chunkedUpload, halfSent, rssGrowth, statusLatencyApart as statusLatency } from "../helpers/hostile-clients.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";

const MiB = 1024 * 1024;

async function timed(url: string, key: string, body: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  await res.arrayBuffer();
  return { status: res.status, ms: Math.round(performance.now() - t0) };
}

async function main() {
  const modelDir = await tinyModelDir();
  const server: ServerProcess = await startServerProcess({ dataDir: tempDir(), modelsDir: dirname(modelDir) });
  try {
    const unauth = await rssGrowth(server.pid, () => chunkedUpload(server.url, "/v1/chat/completions", 512 * MiB));
    console.log(`item 1: 512 MiB unauthenticated chunked upload → ${unauth.result}; RSS ${unauth.baseMb.toFixed(0)} MB, grew ${unauth.growthMb.toFixed(1)} MB`);
    const model = JSON.parse(await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).text()).data[0].id;
    const huge = JSON.stringify({ model, messages: [{ role: "user", content: "word ".repeat(4 * MiB) }] });
    const big = await statusLatency(server.url, () => timed(server.url, server.key, huge));
    console.log(`item 2: ${(huge.length / MiB).toFixed(0)} MB prompt → ${big.result.status} in ${big.result.ms} ms; worst /v1/status ${big.worstMs.toFixed(1)} ms over ${big.polls} polls`);
    const maximal = JSON.stringify({ model, messages: [{ role: "user", content: "word ".repeat(Math.floor((4 * MiB - 200) / 5)) }] });
    const max = await statusLatency(server.url, () => timed(server.url, server.key, maximal));
    console.log(`item 2: ${(maximal.length / MiB).toFixed(2)} MB prompt (under the 4 MiB body limit) → ${max.result.status} in ${max.result.ms} ms; worst /v1/status ${max.worstMs.toFixed(1)} ms over ${max.polls} polls`);
    const deep = await statusLatency(server.url, () => timed(server.url, server.key, "[".repeat(100_000) + "]".repeat(100_000)));
    console.log(`item 2: 100,000 nested [ ] → ${deep.result.status} in ${deep.result.ms} ms; worst /v1/status ${deep.worstMs.toFixed(1)} ms`);
    const [open, openKeyed, openHeaders] = await Promise.all([
      halfSent(server.url, 300, 15_000),
      // Past the 30 s body timeout: a stalled body with a key is read until then, then answered 408 and closed.
      halfSent(server.url, 300, 35_000, { key: server.key }),
      halfSent(server.url, 300, 15_000, { partialHeaders: true }),
    ]);
    console.log(`item 6: 300 half-sent unauthenticated requests → ${open} still open after 15 s`);
    console.log(`item 6: 300 half-sent requests with a key → ${openKeyed} still open after 35 s`);
    console.log(`item 6: 300 requests with half-sent headers → ${openHeaders} still open after 15 s`);
  } finally {
    console.log(`server exit code ${await server.stop()}`);
  }
}

if (import.meta.main) await main();
