// Drives a built decoder graph directly through onnxruntime-node (no transformers.js), for exact logits comparisons.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";

export interface Driver {
  session: ort.InferenceSession;
  layers: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
}

export async function openDriver(modelDir: string, file = "model.onnx"): Promise<Driver> {
  const c = JSON.parse(readFileSync(join(modelDir, "config.json"), "utf8"));
  const session = await ort.InferenceSession.create(join(modelDir, "onnx", file), { intraOpNumThreads: 1 });
  return { session, layers: c.num_hidden_layers, kvHeads: c.num_key_value_heads, headDim: c.head_dim, vocab: c.vocab_size };
}

export type Past = Record<string, ort.Tensor>;

const i64 = (rows: number[][]) => new ort.Tensor("int64", BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, rows[0]!.length]);

/**
 * One forward pass. `mask` covers past + new tokens; position ids are cumsum(mask) − 1, with `padPosition` on padding
 * (transformers.js writes 1 there; a plain cumsum leaves −1).
 */
export async function forward(d: Driver, ids: number[][], mask: number[][], past: Past | null, keep = 0, padPosition = 1) {
  const b = ids.length, s = ids[0]!.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: i64(ids),
    attention_mask: i64(mask),
    position_ids: i64(
      mask.map((row) => {
        let c = 0;
        return row.map((m) => ((c += m), m ? c - 1 : padPosition)).slice(-s);
      }),
    ),
    num_logits_to_keep: new ort.Tensor("int64", BigInt64Array.from([BigInt(keep)]), []),
  };
  for (let i = 0; i < d.layers; i++) {
    for (const kv of ["key", "value"]) {
      feeds[`past_key_values.${i}.${kv}`] = past?.[`present.${i}.${kv}`] ?? new ort.Tensor("float32", new Float32Array(0), [b, d.kvHeads, 0, d.headDim]);
    }
  }
  const out = await d.session.run(feeds);
  const logits = out.logits!;
  return { logits: logits.data as Float32Array, dims: logits.dims as number[], past: out as Past };
}

export function argmax(v: Float32Array, from: number, len: number): number {
  let best = 0;
  for (let i = 1; i < len; i++) if (v[from + i]! > v[from + best]!) best = i;
  return best;
}

/** Greedy decoding of left-padded prompts with the KV cache; returns new tokens and each step's last-position logits per row. */
export async function greedy(d: Driver, prompts: number[][], steps: number, padPosition = 1) {
  const width = Math.max(...prompts.map((p) => p.length));
  let ids = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p]);
  const mask = prompts.map((p) => [...new Array(width - p.length).fill(0), ...new Array(p.length).fill(1)]);
  const tokens: number[][] = prompts.map(() => []);
  const logits: Float32Array[][] = prompts.map(() => []);
  let past: Past | null = null;
  for (let step = 0; step < steps; step++) {
    const r = await forward(d, ids, mask, past, 1, padPosition);
    past = r.past;
    const next = prompts.map((_, row) => {
      const row0 = row * d.vocab;
      logits[row]!.push(r.logits.slice(row0, row0 + d.vocab));
      return argmax(r.logits, row0, d.vocab);
    });
    next.forEach((t, row) => {
      tokens[row]!.push(t);
      mask[row]!.push(1);
    });
    ids = next.map((t) => [t]);
  }
  return { tokens, logits };
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} ≠ ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Pearson correlation of two equally long vectors. */
export function correlation(a: Float32Array, b: Float32Array): number {
  let ma = 0, mb = 0;
  for (let i = 0; i < a.length; i++) (ma += a[i]!), (mb += b[i]!);
  ma /= a.length;
  mb /= b.length;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! - ma, y = b[i]! - mb;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

/** Per-position correlation of two [1, S, vocab] logits tensors: how closely each next-token distribution agrees. */
export function positionCorrelations(a: Float32Array, b: Float32Array, vocab: number): number[] {
  const out: number[] = [];
  for (let p = 0; p * vocab < a.length; p++) out.push(correlation(a.subarray(p * vocab, (p + 1) * vocab), b.subarray(p * vocab, (p + 1) * vocab)));
  return out;
}
