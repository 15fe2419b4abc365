// `bun run bench`: the 0.5B-shape model, direct ONNX Runtime loop, kiln's engine in process and kiln over HTTP at 1/4/8/16, one table.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { onnxFileForDtype } from "../../src/models/manifest.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { logitsAgreement } from "./accuracy.ts";
import { BENCH_DTYPES, benchServerEnv, DTYPE, ensureBenchModel, FORMATS, MODELS_BASE, MODELS_DIR, NEW_TOKENS, ROUNDS, SMALL, SPEC } from "./bench-model.ts";
import { directDecodeBench, type DirectBenchResult } from "./direct-ort.ts";
import { engineDecodeBench, loadEngineModel } from "./engine-inproc.ts";
import { type FreshChat, freshChat } from "./fresh-chat.ts";
import { llamaCppSection, llamaLevelForBench, openLlamaForBench } from "./llama-cpp-section.ts";
import { httpOverEngineLine, medianBy, renderTable, summarize, targetLines, type LevelSummary } from "./metrics.ts";
import { breakdown, cpuBetween, parseRecords, type ProfileLevel, readThreadCpu, renderProfile } from "./profile.ts";
import { startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";
import { structuredRow } from "./structured.ts";
import { webgpuSection } from "./webgpu-section.ts";

const LEVELS = (process.env.KILN_BENCH_LEVELS ?? "1,4,8,16").split(",").map(Number);
/** `npm run bench -- --profile` (build/bench.mjs sets it): per-step timings from the server's worker, CPU per thread. */
const PROFILE = process.env.KILN_BENCH_PROFILE === "1";
/** KILN_BENCH_STRUCTURED=0 leaves out the constrained-vs-unconstrained row (it takes as long as the levels). */
const STRUCTURED = process.env.KILN_BENCH_STRUCTURED !== "0";
/** KILN_BENCH_LOGPROBS=5: every kiln request asks for logprobs with that many top_logprobs (unset or 0: none ask). */
const LOGPROBS = Number(process.env.KILN_BENCH_LOGPROBS ?? 0);
const logprobsFields = LOGPROBS > 0 ? { logprobs: true, top_logprobs: LOGPROBS } : {};

/** The quantized format against fp32: next-token logits over a 32-token teacher-forced run of the fixed prompt. */
async function accuracyLine(modelDir: string, promptIds: number[]): Promise<string> {
  if (DTYPE === "fp32") return "accuracy: fp32 is the reference";
  const refDir = await ensureBenchModel("fp32");
  const lines: string[] = [];
  for (const dtype of BENCH_DTYPES) {
    const a = await logitsAgreement(refDir, onnxFileForDtype("fp32")!, modelDir, onnxFileForDtype(dtype)!, promptIds.slice(0, 32));
    lines.push(`accuracy: ${dtype} vs fp32 next-token logits over a ${a.positions}-token teacher-forced run, correlation min ${a.min.toFixed(4)}, median ${a.median.toFixed(4)}`);
  }
  return lines.join("\n");
}

/**
 * kiln over HTTP: `clients` concurrent streaming requests per round, each with a prompt no other request had (`fresh`:
 * test/load/fresh-chat.ts says why); the median round stands for the level.
 * `afterLevel` runs right after each level while the server idles: the direct loop at the same batch, so the two
 * sides of kiln/direct see the same load on a shared box (sections minutes apart drifted by 30% here).
 */
async function kilnLevels(
  modelsDir: string,
  threads: number,
  fresh: FreshChat,
  afterLevel: (clients: number) => Promise<void>,
): Promise<{ levels: LevelSummary[]; peakRssMb: number; structured: string; profile: Omit<ProfileLevel, "directStepMs">[] }> {
  const profileFile = join(tempDir("kiln-profile-"), "steps.jsonl");
  const env: Record<string, string> = { ...benchServerEnv(threads), ...(PROFILE ? { KILN_PROFILE_FILE: profileFile } : {}) };
  const server = await startServerProcess({ dataDir: tempDir("kiln-bench-"), modelsDir, env });
  const profile: Omit<ProfileLevel, "directStepMs">[] = [];
  const body = () => ({ model: SPEC.id, messages: [{ role: "user", content: fresh.next() }], max_tokens: NEW_TOKENS, temperature: 0, ignore_eos: true, ...logprobsFields });
  try {
    await streamChat(server.url, server.key, { ...body(), max_tokens: 4 }); // warm-up
    const levels: LevelSummary[] = [];
    for (const clients of LEVELS) {
      const rounds: LevelSummary[] = [];
      // The worker appends its records when its loop goes idle, i.e. after each round; the file is read per level.
      if (PROFILE) await Bun.write(profileFile, "");
      const cpu0 = PROFILE ? readThreadCpu(server.pid) : null;
      const client0 = process.cpuUsage();
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = performance.now();
        const timings = await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body())));
        rounds.push(summarize(clients, timings, performance.now() - t0));
        for (const t of timings) expect(t.outputTokens).toBe(NEW_TOKENS);
      }
      const s = medianBy(rounds, (x) => x.outputTokPerSec);
      levels.push(s);
      if (cpu0) {
        // The worker appends its records when its loop goes idle, a moment after the last stream ended: wait for every
        // request's decode steps (its first token comes from the prefill).
        const decoded = clients * ROUNDS * (NEW_TOKENS - 1);
        const records = await waitFor(async () => parseRecords(await Bun.file(profileFile).text()), {
          what: `step records of ${decoded} decoded tokens`,
          until: (rs) => rs.reduce((n, r) => n + r.decodeRows, 0) >= decoded,
          timeoutMs: 60_000,
        });
        const c = process.cpuUsage(client0);
        const steps = breakdown(records);
        const serverCpu = cpuBetween(cpu0, readThreadCpu(server.pid), server.pid);
        profile.push({ clients, steps, serverCpu, clientCpuMs: (c.user + c.system) / 1000, tpotP50: s.tpotP50 });
      }
      await afterLevel(clients);
      console.log(`kiln ${clients} clients: ${s.outputTokPerSec.toFixed(1)} tok/s (rounds: ${rounds.map((x) => x.outputTokPerSec.toFixed(1)).join(", ")})`);
    }
    // Constrained vs unconstrained at 16 clients on the same server (test/load/structured.ts).
    const structured = !STRUCTURED ? "structured row left out (KILN_BENCH_STRUCTURED=0)" : await structuredRow({ url: server.url, key: server.key, model: SPEC.id, prompt: fresh.next, clients: 16, maxTokens: NEW_TOKENS, rounds: ROUNDS });
    console.log(structured);
    return { levels, peakRssMb: await server.peakRssMb(), structured, profile };
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

test(
  "chat throughput: kiln vs a direct ONNX Runtime loop",
  async () => {
    const modelDir = await ensureBenchModel(DTYPE, BENCH_DTYPES);
    const threads = navigator.hardwareConcurrency;
    const tokenizer = await loadTokenizer(readModelFolder(modelDir, SPEC.id));
    // Every request and every llama.cpp row gets its own prompt, all of this length (test/load/fresh-chat.ts).
    const fresh = await freshChat(tokenizer);
    const promptIds = fresh.promptIds;
    const promptTokens = promptIds.length;

    // kiln over HTTP, then the direct loop, llama.cpp and kiln's engine in process (on the same weights and prompt ids),
    // level by level: the server idles while the others run, and all of them see the same load on a shared box. The
    // engine used to run after the server stopped, minutes from its HTTP level, and its ratio to HTTP moved with the
    // box's drift (0.86–0.99× at 16 clients across sittings).
    const gguf = { spec: SPEC, ggufDir: join(MODELS_BASE, "gguf"), promptIds, promptsFor: fresh.idsFor, levels: LEVELS, newTokens: NEW_TOKENS, rounds: ROUNDS, threads };
    const llama = await openLlamaForBench(gguf);
    const direct: number[] = [];
    const directRuns: DirectBenchResult[] = [];
    const engine: number[] = [];
    const engineModel = await loadEngineModel(modelDir, DTYPE, threads, SMALL);
    let kiln: Awaited<ReturnType<typeof kilnLevels>>;
    try {
      kiln = await kilnLevels(MODELS_DIR, threads, fresh, async (batch) => {
        const r = await directDecodeBench({ modelDir, dtype: DTYPE, small: SMALL, batch, promptTokens, newTokens: NEW_TOKENS, threads, rounds: ROUNDS });
        direct.push(r.tokPerSec);
        directRuns.push(r);
        console.log(`direct batch ${batch}: ${r.tokPerSec.toFixed(1)} tok/s (step p50 ${r.stepMsP50.toFixed(1)} ms)`);
        await llamaLevelForBench(llama, gguf, batch);
        engine.push(await engineDecodeBench(engineModel, { batch, promptTokens, newTokens: NEW_TOKENS, rounds: ROUNDS }));
        console.log(`engine batch ${batch}: ${engine[engine.length - 1]!.toFixed(1)} tok/s`);
      });
    } finally {
      await engineModel.dispose();
    }

    const accuracy = await accuracyLine(modelDir, promptIds);

    console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
    console.log(accuracy);
    console.log(`model ${SPEC.id}, ${FORMATS}, prompt ${promptTokens} tokens, ${NEW_TOKENS} new tokens, ${threads} threads, median of ${ROUNDS} rounds`);
    console.log(`kiln's requests: ${LOGPROBS > 0 ? `logprobs with top_logprobs ${LOGPROBS} on every one` : "no logprobs"} (KILN_BENCH_LOGPROBS)\n`);
    const rows = LEVELS.map((_, i) => ({ direct: direct[i]!, engine: engine[i]!, kiln: kiln.levels[i]! }));
    console.log(renderTable(rows, kiln.peakRssMb, kiln.levels[0]!.outputTokPerSec));
    console.log([...targetLines(rows, directRuns[directRuns.length - 1]!.prefillMs), httpOverEngineLine(rows)].join("\n"));
    console.log(`\n${kiln.structured}`);
    if (PROFILE) console.log(`\n${renderProfile(kiln.profile.map((p, k) => ({ ...p, directStepMs: directRuns[k]?.stepMsP50 })))}`);

    // One table of everyone's wall and decode rates, and the long-prompt scenario (test/load/llama-cpp-section.ts);
    // llama.cpp's rows are skipped, with the reason, when node-llama-cpp cannot load.
    console.log(await llamaCppSection({ ...gguf, kiln: kiln.levels, direct: directRuns, llama, modelDir, dtype: DTYPE, small: SMALL }));

    // The device auto would pick here and, where webgpu runs (even on a software driver), its accuracy and step
    // profile (test/load/webgpu-section.ts). Last, so Dawn's threads never share the box with the CPU measurements.
    const webgpu = await webgpuSection({ promptIds, cpu: { dir: modelDir, dtype: DTYPE, small: SMALL }, threads });
    console.log(`\n${webgpu.text}`);
    expect(webgpu.problems).toEqual([]);
  },
  3_600_000,
);
