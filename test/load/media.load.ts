// `npm run bench -- --media`: media-input throughput of a real kiln process on the benchmark-size media presets —
// one 336×336 image (kiln-vision-small-v1, 576 image rows) or 10 s of audio (kiln-audio-small-v1) with a short prompt,
// at 1, 4 and 8 concurrent clients: requests/s, TTFT p50/p95, and the share of prefill time the encoder took (from
// the workers' own step profile). Each client sends KILN_BENCH_MEDIA_REQUESTS streamed requests of 16 tokens;
// KILN_BENCH_MEDIA_VISION / KILN_BENCH_MEDIA_AUDIO name other presets (the README test runs the tiny ones).
import { expect, test } from "bun:test";
import { readFileSync, renameSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { installModel, PRESETS } from "../../src/modelgen/index.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { noiseImage, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { MODELS_BASE } from "./bench-model.ts";
import { markdownTable, percentile } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

const LEVELS = [1, 4, 8];
const PER_CLIENT = Number(process.env.KILN_BENCH_MEDIA_REQUESTS ?? 3);
const NEW_TOKENS = 16;
const PROMPT = "Describe this in one sentence.";
const VISION = process.env.KILN_BENCH_MEDIA_VISION ?? "vision-small";
const AUDIO = process.env.KILN_BENCH_MEDIA_AUDIO ?? "audio-small";

interface Row {
  input: string;
  clients: number;
  requests: number;
  reqPerSec: number;
  ttft: number[];
  promptTokens: number;
  encodeMs: number;
  encoded: number;
  prefillMs: number;
}

/** Prefill time and the encoders' share, from the workers' step records. */
interface Totals {
  encodeMs: number;
  prefillMs: number;
  prefillTokens: number;
}

/**
 * Takes the step records written since the last take (renamed away first, so a record appended meanwhile goes to a
 * new file and is kept for the next take) and adds them to `into`.
 */
function takeProfile(file: string, into: Totals): void {
  const taken = `${file}.taken`;
  try {
    renameSync(file, taken);
  } catch {
    return;
  }
  for (const line of readFileSync(taken, "utf8").split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line) as { prefillTokens: number; stepMs: number; encodeMs?: number };
    if (r.prefillTokens > 0) into.prefillMs += r.stepMs;
    into.prefillTokens += r.prefillTokens;
    into.encodeMs += r.encodeMs ?? 0;
  }
  rmSync(taken, { force: true });
}

/**
 * The records of `requests` prompts of `promptTokens` each: a worker writes its records when it goes idle, which may
 * be a moment after the last stream ended, so this waits until every prompt's prefill is in the file.
 */
async function profileTotals(file: string, requests: number, promptTokens: number): Promise<Totals> {
  const totals: Totals = { encodeMs: 0, prefillMs: 0, prefillTokens: 0 };
  await waitFor(
    () => {
      takeProfile(file, totals);
      return totals.prefillTokens >= requests * promptTokens;
    },
    { what: `step records of ${requests} prefills of ${promptTokens} tokens`, timeoutMs: 60_000 },
  );
  return totals;
}

test(
  "media-input throughput at 1, 4 and 8 clients",
  async () => {
    const modelsDir = join(MODELS_BASE, "media");
    for (const preset of [VISION, AUDIO]) {
      if (!PRESETS[preset]) throw new Error(`no preset "${preset}"`);
      const r = await installModel(modelsDir, { spec: PRESETS[preset]!, dtypes: ["fp32"] });
      console.log(`${PRESETS[preset]!.id}: ${r.built ? "built" : "up to date"} in ${modelsDir}`);
    }
    const profile = join(tempDir("kiln-bench-media-"), "steps.jsonl");
    const threads = navigator.hardwareConcurrency;
    // Every request sends the same medium: with the prefix cache its rows (and its encoder) would be skipped after the
    // first, and this scenario measures the encoders' share of a real prefill.
    const env = { KILN_THREADS: String(threads), KILN_PROFILE_FILE: profile, KILN_PREFIX_CACHE: "0" };
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-media-data-"), modelsDir, env });
    const png = Buffer.from(await noiseImage("png", 336, 336)).toString("base64");
    const wav = Buffer.from(wavBytes(sine(440, 10, 16000, 0.3), 16000)).toString("base64");
    const inputs = [
      { input: "one 336×336 image", model: PRESETS[VISION]!.id, part: { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } } },
      { input: "10 s of audio", model: PRESETS[AUDIO]!.id, part: { type: "input_audio", input_audio: { data: wav, format: "wav" } } },
    ];
    const rows: Row[] = [];
    try {
      for (const { input, model, part } of inputs) {
        const body = { model, max_tokens: NEW_TOKENS, ignore_eos: true, temperature: 0, messages: [{ role: "user", content: [{ type: "text", text: PROMPT }, part] }] };
        // One request first: the worker's sessions warm up and the prompt's size is read from its usage.
        const warm = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(warm.status).toBe(200);
        const promptTokens = ((await warm.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
        await profileTotals(profile, 1, promptTokens);
        for (const clients of LEVELS) {
          const ttft: number[] = [];
          const t0 = performance.now();
          await Promise.all(
            Array.from({ length: clients }, async () => {
              for (let i = 0; i < PER_CLIENT; i++) {
                const t = await streamChat(server.url, server.key, body);
                expect(t.outputTokens).toBe(NEW_TOKENS);
                ttft.push(t.ttftMs);
              }
            }),
          );
          const seconds = (performance.now() - t0) / 1000;
          const totals = await profileTotals(profile, ttft.length, promptTokens);
          rows.push({ input, clients, requests: ttft.length, reqPerSec: ttft.length / seconds, ttft, promptTokens, encodeMs: totals.encodeMs, encoded: ttft.length, prefillMs: totals.prefillMs });
        }
      }
    } finally {
      await server.stop();
    }
    console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
    console.log(`kiln process, ${threads} ONNX Runtime threads, fp32, ${NEW_TOKENS} new tokens a request, ${PER_CLIENT} requests per client, load ${loadavg()[0]!.toFixed(2)}\n`);
    console.log(
      markdownTable(
        ["input", "prompt tokens", "clients", "requests", "req/s", "TTFT p50 (ms)", "TTFT p95 (ms)", "encoder ms / item", "encoder share of prefill"],
        rows.map((r) => [
          r.input, String(r.promptTokens), String(r.clients), String(r.requests), r.reqPerSec.toFixed(2), percentile(r.ttft, 50).toFixed(0), percentile(r.ttft, 95).toFixed(0),
          (r.encodeMs / r.encoded).toFixed(1), r.prefillMs > 0 ? `${((100 * r.encodeMs) / r.prefillMs).toFixed(0)}%` : "n/a",
        ]),
      ),
    );
    for (const r of rows) expect(r.encodeMs).toBeGreaterThan(0);
  },
  3_600_000,
);
