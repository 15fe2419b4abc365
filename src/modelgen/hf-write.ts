// A spec written as a Hugging Face model folder (config.json, safetensors shards with their index, tokenizer files),
// as an operator would download it: the import tests' and the benchmark's second source format.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { GivenTokenizer, WeightSource } from "./build.ts";
import { encodeTensor, GGML_TYPE } from "./gguf-blocks.ts";
import { builtSpecialIds, generationConfig, modelConfig } from "./model-files.ts";
import type { ModelSpec } from "./spec.ts";
import { buildTokenizer } from "./tokenizer.ts";
import { generateWeight, weightPlan, type PlanEntry } from "./weights.ts";

export type HfDtype = "F32" | "F16" | "BF16";
const BYTES: Record<HfDtype, number> = { F32: 4, F16: 2, BF16: 2 };

interface Stored {
  name: string;
  shape: number[];
  /** The plan entry holding its values, and where they start (a part of a fused tensor). */
  plan: PlanEntry;
  at: number;
  elements: number;
}

/** The tensors a Hugging Face checkpoint stores for `spec`: fused ones as their parts, the tied head left out. */
function storedTensors(spec: ModelSpec): Stored[] {
  const out: Stored[] = [];
  for (const e of weightPlan(spec)) {
    const rowsOf = (size: number) => (e.kind === "norm" || e.kind === "bias" ? [size] : [size / e.cols, e.cols]);
    // Phi-3 checkpoints keep q/k/v and gate/up fused, as kiln's plan does.
    const fused = spec.architecture === "phi3" && e.kind === "linear";
    if (e.parts && !fused) {
      let at = 0;
      for (const p of e.parts) {
        out.push({ name: p.name, shape: rowsOf(p.size), plan: e, at, elements: p.size });
        at += p.size;
      }
    } else out.push({ name: e.name, shape: e.kind === "norm" || e.kind === "bias" ? [e.cols] : [e.rows, e.cols], plan: e, at: 0, elements: e.rows * e.cols });
  }
  return out;
}

/** The stored bytes of `v` (ggml's F32/F16/BF16 codecs write the same little-endian layouts, rounding to nearest even). */
function encode(dtype: HfDtype, v: Float32Array): Uint8Array {
  return encodeTensor(GGML_TYPE[dtype], v);
}

export interface HfWriteOptions {
  dtype: HfDtype;
  /** Split the tensors over this many shards (with model.safetensors.index.json); 1 writes model.safetensors. */
  shards?: number;
  weights?: WeightSource;
  /** Default: kiln's own tokenizer for the spec's vocabulary. */
  tokenizer?: GivenTokenizer;
  /** config.json fields written over the derived ones (rope_scaling, sliding_window…). */
  config?: Record<string, unknown>;
}

export function writeHfFolder(spec: ModelSpec, dir: string, opts: HfWriteOptions): void {
  mkdirSync(dir, { recursive: true });
  const tokenizer = opts.tokenizer ?? (() => {
    const t = buildTokenizer(spec.vocab, spec.contextLength);
    return { tokenizerJson: t.tokenizerJson, tokenizerConfig: t.tokenizerConfig, ids: builtSpecialIds(t.ids) };
  })();
  const tensors = storedTensors(spec);
  const shards = Math.max(1, Math.min(opts.shards ?? 1, tensors.length));
  const per = Math.ceil(tensors.length / shards);
  const weightMap: Record<string, string> = {};
  const values = new Map<string, Float32Array>();
  const valuesOf = (e: PlanEntry): Float32Array => {
    let v = values.get(e.name);
    if (!v) {
      v = new Float32Array(e.rows * e.cols);
      for (const c of opts.weights ? opts.weights(e) : generateWeight(spec, e)) v.set(c.data, c.rowStart * e.cols);
      values.clear();
      values.set(e.name, v);
    }
    return v;
  };
  for (let s = 0; s < shards; s++) {
    const mine = tensors.slice(s * per, (s + 1) * per);
    const file = shards === 1 ? "model.safetensors" : `model-${String(s + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
    const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
    let offset = 0;
    for (const t of mine) {
      const bytes = t.elements * BYTES[opts.dtype];
      header[t.name] = { dtype: opts.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
      offset += bytes;
      weightMap[t.name] = file;
    }
    let json = JSON.stringify(header);
    json += " ".repeat((8 - ((8 + json.length) % 8)) % 8);
    const fd = openSync(join(dir, file), "w");
    try {
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
      writeSync(fd, len);
      writeSync(fd, json);
      for (const t of mine) writeSync(fd, encode(opts.dtype, valuesOf(t.plan).subarray(t.at, t.at + t.elements)));
    } finally {
      closeSync(fd);
    }
  }
  if (shards > 1) writeFileSync(join(dir, "model.safetensors.index.json"), JSON.stringify({ metadata: {}, weight_map: weightMap }, null, 2));
  // The builder's own config.json, as a checkpoint states it: no transformers.js block, the stored dtype, single eos as a number.
  const { "transformers.js_config": _, ...base } = modelConfig(spec, tokenizer.ids, "fp32");
  const config: Record<string, unknown> = {
    ...base,
    torch_dtype: opts.dtype === "F32" ? "float32" : opts.dtype === "F16" ? "float16" : "bfloat16",
    eos_token_id: tokenizer.ids.eos.length === 1 ? tokenizer.ids.eos[0] : tokenizer.ids.eos,
    ...opts.config,
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, "generation_config.json"), JSON.stringify(generationConfig(tokenizer.ids), null, 2));
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizer.tokenizerJson));
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(tokenizer.tokenizerConfig, null, 2));
}
