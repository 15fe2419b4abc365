// A/B of two server settings on a shared, noisy box: servers A and B are started in turn (never together), each
// measures `clients` concurrent greedy streams for a few rounds, and the pairs repeat, so both see the same drift.
// Prints every round, the medians, each server's peak RSS and the load average.
//
//   bun test/load/ab-server.ts 'KILN_ORT_SPINNING=1' 'KILN_ORT_SPINNING=0'
//   env: AB_MODELS (models dir, default data/bench-models/int8), AB_CLIENTS (1,16), AB_PAIRS (3), AB_ROUNDS (2), AB_TOKENS (64)
//   AB_STAGGER=<words>: a round is 5 requests a client, each client sending its next as its last ends, of that many
//   words of prompt and 32–95 new tokens, so rows join and leave the batch at every step (AB_TOKENS is ignored)
import { loadavg } from "node:os";
import { join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { percentile, summarize } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

const [a = "", b = ""] = process.argv.slice(2);
const parseEnv = (s: string) => Object.fromEntries(s.split(/\s+/).filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]));
const MODELS = process.env.AB_MODELS ?? join(import.meta.dir, "..", "..", "data", "bench-models", "int8");
const CLIENTS = (process.env.AB_CLIENTS ?? "1,16").split(",").map(Number);
const PAIRS = Number(process.env.AB_PAIRS ?? 3);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 2);
const TOKENS = Number(process.env.AB_TOKENS ?? 64);
const MODEL = process.env.AB_MODEL ?? "kiln-qwen2-0.5b-bench-v1";
const PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle on a quiet winter morning.";
const STAGGER_WORDS = Number(process.env.AB_STAGGER ?? 0);
const WORDS = "harbor lantern winter keeper bottle message tide stone gull rope window storm ledger candle map compass".split(" ");

/** The i-th staggered request: a prompt of STAGGER_WORDS words and 32–95 new tokens, the same for A and B. */
function staggered(i: number) {
  const words = Array.from({ length: STAGGER_WORDS }, (_, w) => WORDS[(i * 31 + w * 7 + ((w * w) % 5)) % WORDS.length]);
  return { model: MODEL, messages: [{ role: "user", content: `Request ${i}: ${words.join(" ")}` }], max_tokens: 32 + ((i * 37) % 64), temperature: 0, ignore_eos: true };
}

/** One round: `clients` loops that send 5 requests each between them, the next as soon as one ends. */
async function staggeredRound(url: string, key: string, clients: number, round: number) {
  const total = clients * 5;
  let next = 0;
  const timings: Awaited<ReturnType<typeof streamChat>>[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) timings.push(await streamChat(url, key, staggered(round * total + next++)));
    }),
  );
  return timings;
}

type Key = `${string}@${number}`;
const rates = new Map<Key, number[]>();
const tpots = new Map<Key, number[]>();
/** Each server's peak resident size (VmHWM) over its whole run, MB, by label. */
const peaks = new Map<string, number[]>();

async function measure(label: string, env: Record<string, string>): Promise<void> {
  const server = await startServerProcess({ dataDir: tempDir("kiln-ab-"), modelsDir: MODELS, env: { KILN_THREADS: String(navigator.hardwareConcurrency), ...env } });
  const body = { model: MODEL, messages: [{ role: "user", content: PROMPT }], max_tokens: TOKENS, temperature: 0, ignore_eos: true };
  try {
    await streamChat(server.url, server.key, { ...body, max_tokens: 4 });
    for (const clients of CLIENTS) {
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = performance.now();
        const timings = STAGGER_WORDS > 0 ? await staggeredRound(server.url, server.key, clients, r) : await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body)));
        const s = summarize(clients, timings, performance.now() - t0);
        const key: Key = `${label}@${clients}`;
        (rates.get(key) ?? rates.set(key, []).get(key)!).push(s.outputTokPerSec);
        (tpots.get(key) ?? tpots.set(key, []).get(key)!).push(s.tpotP50);
        console.log(`${label} ${clients} clients: ${s.outputTokPerSec.toFixed(1)} tok/s, TPOT p50 ${s.tpotP50.toFixed(1)} ms, TTFT p95 ${s.ttftP95.toFixed(0)} ms (load ${loadavg()[0]!.toFixed(2)})`);
      }
    }
    const peak = await server.peakRssMb();
    (peaks.get(label) ?? peaks.set(label, []).get(label)!).push(peak);
    console.log(`${label} peak RSS ${peak.toFixed(0)} MB`);
  } finally {
    await server.stop();
  }
}

for (let p = 0; p < PAIRS; p++) {
  // Alternate which goes first, so a trend in the box's load does not favour one side.
  const order: [string, string][] = p % 2 === 0 ? [["A", a], ["B", b]] : [["B", b], ["A", a]];
  for (const [label, env] of order) await measure(label, parseEnv(env));
}
console.log(`\nA = ${a || "(defaults)"}\nB = ${b || "(defaults)"}`);
for (const clients of CLIENTS) {
  const m = (label: string, map: Map<Key, number[]>) => percentile(map.get(`${label}@${clients}`) ?? [], 50);
  const ra = m("A", rates);
  const rb = m("B", rates);
  console.log(`${clients} clients: A ${ra.toFixed(1)} tok/s (TPOT ${m("A", tpots).toFixed(1)} ms), B ${rb.toFixed(1)} tok/s (TPOT ${m("B", tpots).toFixed(1)} ms), B/A ${(rb / ra).toFixed(3)}`);
}
const peak = (label: string) => percentile(peaks.get(label) ?? [], 50);
console.log(`peak RSS (median of ${PAIRS}): A ${peak("A").toFixed(0)} MB, B ${peak("B").toFixed(0)} MB, B/A ${(peak("B") / peak("A")).toFixed(3)}`);
console.log(`load average now: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
