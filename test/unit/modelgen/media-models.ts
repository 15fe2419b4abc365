// Builds media presets (or any spec) once per test process into a temp root, and drives their graphs through onnxruntime-node.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { buildModel, type Dtype, type ModelSpec } from "../../../src/modelgen/index.ts";
import { argmax } from "./ort-driver.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-media-models-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const built = new Map<string, Promise<string>>();

/** The folder of `spec` built with `dtypes` (fp32 by default), built on first use. */
export function builtModel(spec: ModelSpec, dtypes: Dtype[] = ["fp32"]): Promise<string> {
  const key = `${spec.id}-${dtypes.join("-")}-${spec.seed}`;
  let dir = built.get(key);
  if (!dir) {
    dir = buildModel({ spec, dtypes, outDir: join(root, key, spec.id) }).then((r) => r.dir);
    built.set(key, dir);
  }
  return dir;
}

export const session = (dir: string, stem: string) => ort.InferenceSession.create(join(dir, "onnx", `${stem}.onnx`), { intraOpNumThreads: 1 });

const i64 = (v: number[]) => new ort.Tensor("int64", BigInt64Array.from(v.map(BigInt)), [1, v.length]);

/** embed_tokens + decoder_model_merged of a media folder, with greedy decoding over merged features. */
export interface MediaDriver {
  embed: ort.InferenceSession;
  decoder: ort.InferenceSession;
  layers: number;
  kvHeads: number;
  headDim: number;
  hidden: number;
  vocab: number;
}

export async function openMediaDriver(dir: string): Promise<MediaDriver> {
  const text = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).text_config;
  return {
    embed: await session(dir, "embed_tokens"),
    decoder: await session(dir, "decoder_model_merged"),
    layers: text.num_hidden_layers, kvHeads: text.num_key_value_heads, headDim: text.head_dim, hidden: text.hidden_size, vocab: text.vocab_size,
  };
}

/** Logits of every position for `embeds` [1, S, hidden] after `past` tokens (empty cache when null). */
export async function decode(d: MediaDriver, embeds: Float32Array, past: Record<string, ort.Tensor> | null, pastLen: number, keep = 0) {
  const s = embeds.length / d.hidden;
  const feeds: Record<string, ort.Tensor> = {
    inputs_embeds: new ort.Tensor("float32", embeds, [1, s, d.hidden]),
    attention_mask: i64(new Array(pastLen + s).fill(1)),
    position_ids: i64(Array.from({ length: s }, (_, i) => pastLen + i)),
    num_logits_to_keep: new ort.Tensor("int64", BigInt64Array.from([BigInt(keep)]), []),
  };
  for (let l = 0; l < d.layers; l++) {
    for (const kv of ["key", "value"]) {
      feeds[`past_key_values.${l}.${kv}`] = past?.[`present.${l}.${kv}`] ?? new ort.Tensor("float32", new Float32Array(0), [1, d.kvHeads, 0, d.headDim]);
    }
  }
  const out = await d.decoder.run(feeds);
  return { logits: out.logits!.data as Float32Array, past: out };
}

export async function embedIds(d: MediaDriver, ids: number[]): Promise<Float32Array> {
  return (await d.embed.run({ input_ids: i64(ids) })).inputs_embeds!.data as Float32Array;
}

/**
 * Greedy tokens (stopping after an id of `eos`) from `ids` whose `tokenId` rows are replaced, in order, by the rows of
 * `features` [rows, hidden]; also the first step's logits. This is the contract's merge, written independently of transformers.js.
 */
export async function greedyWithFeatures(d: MediaDriver, ids: number[], features: Float32Array, tokenId: number, steps: number, eos: number[]) {
  const embeds = await embedIds(d, ids);
  let row = 0;
  ids.forEach((id, i) => {
    if (id === tokenId) embeds.set(features.subarray(row * d.hidden, ++row * d.hidden), i * d.hidden);
  });
  if (row * d.hidden !== features.length) throw new Error(`${row} placeholder rows for ${features.length / d.hidden} feature rows`);
  let r = await decode(d, embeds, null, 0, 1);
  const first = r.logits.slice();
  const tokens: number[] = [];
  for (let len = ids.length; tokens.length < steps; len++) {
    const next = argmax(r.logits, 0, d.vocab);
    tokens.push(next);
    if (eos.includes(next)) break;
    r = await decode(d, await embedIds(d, [next]), r.past, len, 1);
  }
  return { tokens, first };
}
