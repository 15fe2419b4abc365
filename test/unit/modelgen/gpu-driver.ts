// Drives the GPU formats (model_fp16.onnx, model_q4f16.onnx) through onnxruntime-node on the webgpu or cpu EP, for tests.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";

export type Ep = "webgpu" | "cpu";

export interface GpuDriver {
  session: ort.InferenceSession;
  ep: Ep;
  layers: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
}

export async function openGpuDriver(modelDir: string, file: string, ep: Ep, extra: ort.InferenceSession.SessionOptions = {}): Promise<GpuDriver> {
  // Dawn looks for a runtime directory; without one the adapter request fails on a headless machine.
  process.env.XDG_RUNTIME_DIR ??= "/tmp";
  const c = JSON.parse(readFileSync(join(modelDir, "config.json"), "utf8"));
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(join(modelDir, "onnx", file), { executionProviders: [ep], logSeverityLevel: 3, intraOpNumThreads: 1, ...extra });
  } catch (e) {
    if (ep !== "webgpu") throw e;
    throw new Error(
      `WebGPU is unavailable to onnxruntime-node (${(e as Error).message.split("\n")[0]}). Without a GPU it needs Mesa ≥ 25's ` +
        "lavapipe (mesa-vulkan-drivers from bookworm-backports), which kiln's set-up installs.",
    );
  }
  return { session, ep, layers: c.num_hidden_layers, kvHeads: c.num_key_value_heads, headDim: c.head_dim, vocab: c.vocab_size };
}

/**
 * A float16 tensor over half bits. Under Bun a float16 ort.Tensor whose data is a Float16Array reaches native code as
 * 0 bytes; the binding reads `.data`, so it is handed the Uint16Array view of the same bits.
 */
export function f16Tensor(bits: Uint16Array, dims: number[]): ort.Tensor {
  const t = new ort.Tensor("float16", bits, dims);
  Object.defineProperty(t, "data", { value: bits });
  return t;
}

/** The half bits of a float16 output (whatever typed array the binding returned). */
export function halfBits(t: ort.Tensor): Uint16Array {
  const d = t.data as unknown as { buffer: ArrayBuffer; byteOffset: number; length: number };
  return new Uint16Array(d.buffer, d.byteOffset, d.length);
}

export type Cache = Record<string, ort.Tensor>;

export interface StepInput {
  /** [B][S] token ids (rows right-padded by the caller if lengths differ). */
  ids: number[][];
  positions: number[][];
  /** Per row: its total length (cache + new tokens) − 1. */
  seqlensK: number[];
  /** The longest row's total length. */
  total: number;
  /** `past_key_values.{l}.key/value` as fp16 tensors, or null for an empty cache. */
  past: Cache | null;
}

const i64 = (rows: number[][]) => new ort.Tensor("int64", BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, rows[0]!.length]);

/** One pass; returns the last position's logits ([B, vocab] flat) and the present tensors renamed as the next past. */
export async function gpuStep(d: GpuDriver, s: StepInput): Promise<{ logits: Float32Array; dims: number[]; present: Cache }> {
  const b = s.ids.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: i64(s.ids),
    position_ids: i64(s.positions),
    seqlens_k: new ort.Tensor("int32", Int32Array.from(s.seqlensK), [b]),
    total_sequence_length: new ort.Tensor("int32", Int32Array.of(s.total), []),
  };
  for (let l = 0; l < d.layers; l++) {
    for (const kv of ["key", "value"]) {
      const name = `past_key_values.${l}.${kv}`;
      feeds[name] = s.past?.[name] ?? f16Tensor(new Uint16Array(0), [b, d.kvHeads, 0, d.headDim]);
    }
  }
  const out = await d.session.run(feeds);
  const present: Cache = {};
  for (let l = 0; l < d.layers; l++) {
    for (const kv of ["key", "value"]) {
      const t = out[`present.${l}.${kv}`]!;
      present[`past_key_values.${l}.${kv}`] = f16Tensor(halfBits(t).slice(), t.dims as number[]);
    }
  }
  return { logits: out.logits!.data as Float32Array, dims: out.logits!.dims as number[], present };
}

/** Teacher-forced decoding of one row: a prefill of `prefill` tokens, then one token a step; each pass's next-token logits. */
export async function gpuTeacherForced(d: GpuDriver, tokens: number[], prefill: number): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  let r = await gpuStep(d, { ids: [tokens.slice(0, prefill)], positions: [range(0, prefill)], seqlensK: [prefill - 1], total: prefill, past: null });
  out.push(r.logits);
  for (let p = prefill; p < tokens.length; p++) {
    r = await gpuStep(d, { ids: [[tokens[p]!]], positions: [[p]], seqlensK: [p], total: p + 1, past: r.present });
    out.push(r.logits);
  }
  return out;
}

export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
