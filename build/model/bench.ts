// Measures a built model folder: load time, prefill time and batch-1 decode tok/s (transformers.js generate and a direct ORT loop).
// Usage: bun build/model/bench.ts <model dir> [--dtype q4] [--mode tjs|ort] [--prompt 32] [--new 32] [--threads 2]
// Run each mode in its own process: two sessions of a large model in one process skew each other's figures.
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import * as ort from "onnxruntime-node";
import { AutoModelForCausalLM, AutoTokenizer, env, Tensor } from "@huggingface/transformers";
import { ONNX_FILES } from "../../src/modelgen/model-files.ts";
import type { Dtype } from "../../src/modelgen/spec.ts";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const dirArg = argv[0];
if (!dirArg || dirArg.startsWith("--")) {
  console.error("usage: bun build/model/bench.ts <model dir> [--dtype fp32|q4|int8] [--mode tjs|ort] [--prompt 32] [--new 32] [--threads 2]");
  process.exit(2);
}
const dir: string = dirArg;
const dtype = flag("dtype", "fp32") as Dtype;
const promptLen = Number(flag("prompt", "32"));
const newTokens = Number(flag("new", "32"));
const threads = Number(flag("threads", "2"));
const mode = flag("mode", "tjs");
if (mode !== "tjs" && mode !== "ort") {
  console.error("--mode must be tjs or ort");
  process.exit(2);
}
const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
const ms = (t0: number) => performance.now() - t0;

const ids = Array.from({ length: promptLen }, (_, i) => (i * 7919 + 13) % (cfg.vocab_size - 64));

async function benchTransformersJs() {
  env.allowRemoteModels = false;
  env.localModelPath = dirname(dir);
  let t0 = performance.now();
  await AutoTokenizer.from_pretrained(basename(dir), { local_files_only: true }); // timed: tokenizer load
  const tokMs = ms(t0);
  t0 = performance.now();
  const model = await AutoModelForCausalLM.from_pretrained(basename(dir), {
    local_files_only: true,
    dtype,
    session_options: { intraOpNumThreads: threads },
  });
  const loadMs = ms(t0);

  const input_ids = new Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, promptLen]);
  const attention_mask = new Tensor("int64", new BigInt64Array(promptLen).fill(1n), [1, promptLen]);
  // Warm-up, then timed runs: 1 new token (≈ prefill) and newTokens new tokens.
  await model.generate({ input_ids, attention_mask, max_new_tokens: 2, min_new_tokens: 2, do_sample: false });
  t0 = performance.now();
  await model.generate({ input_ids, attention_mask, max_new_tokens: 1, min_new_tokens: 1, do_sample: false });
  const prefillMs = ms(t0);
  t0 = performance.now();
  await model.generate({ input_ids, attention_mask, max_new_tokens: newTokens, min_new_tokens: newTokens, do_sample: false });
  const genMs = ms(t0);
  const tjsTokS = (newTokens - 1) / ((genMs - prefillMs) / 1000);

  return { tokenizer_load_ms: Math.round(tokMs), model_load_ms: Math.round(loadMs), prefill_ms: Math.round(prefillMs), decode_tok_s: +tjsTokS.toFixed(1) };
}

async function benchDirectOrt() {
  // Direct ORT loop (no transformers.js overhead).
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(join(dir, "onnx", ONNX_FILES[dtype]), { intraOpNumThreads: threads });
  const ortLoadMs = ms(t0);
  const L = cfg.num_hidden_layers, KV = cfg.num_key_value_heads, D = cfg.head_dim, V = cfg.vocab_size;
  const i64 = (a: number[], dims: number[]) => new ort.Tensor("int64", BigInt64Array.from(a.map(BigInt)), dims);
  let past: Record<string, ort.Tensor> = {};
  for (let l = 0; l < L; l++) for (const kv of ["key", "value"]) past[`present.${l}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [1, KV, 0, D]);
  let cur = ids, total = 0, decodeMs = 0;
  const stepMs: number[] = [];
  for (let step = 0; step < newTokens; step++) {
    const feeds: Record<string, ort.Tensor> = {
      input_ids: i64(cur, [1, cur.length]),
      attention_mask: i64(new Array(total + cur.length).fill(1), [1, total + cur.length]),
      position_ids: i64(cur.map((_, i) => total + i), [1, cur.length]),
      num_logits_to_keep: i64([1], []),
    };
    for (let l = 0; l < L; l++) for (const kv of ["key", "value"]) feeds[`past_key_values.${l}.${kv}`] = past[`present.${l}.${kv}`]!;
    const s0 = performance.now();
    const out = await session.run(feeds);
    if (step > 0) {
      decodeMs += ms(s0);
      stepMs.push(ms(s0));
    }
    const logits = out.logits!.data as Float32Array;
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[v]! > logits[best]!) best = v;
    total += cur.length;
    cur = [best];
    past = out as Record<string, ort.Tensor>;
  }
  const ortTokS = (newTokens - 1) / (decodeMs / 1000);
  // Median and best step: robust to other processes sharing the cores.
  stepMs.sort((a, b) => a - b);
  const median = stepMs[stepMs.length >> 1]!;
  return {
    session_load_ms: Math.round(ortLoadMs),
    decode_tok_s: +ortTokS.toFixed(1),
    decode_tok_s_median_step: +(1000 / median).toFixed(1),
    decode_tok_s_best_step: +(1000 / stepMs[0]!).toFixed(1),
  };
}

const result = mode === "tjs" ? await benchTransformersJs() : await benchDirectOrt();
console.log(
  JSON.stringify({
    model: basename(dir), dtype, mode, threads, prompt: promptLen, new_tokens: newTokens, ...result,
    rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
  }),
);
process.exit(0);
