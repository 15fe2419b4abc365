// writeGgufModel's options: weights from the caller instead of kiln's seeded streams, another model's tokenizer keys,
// and progress; read back independently and decoded with decodeTensor.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { decodeTensor, GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";
import type { GgufKv } from "../../../src/modelgen/gguf-file.ts";
import { writeGgufModel } from "../../../src/modelgen/gguf-model.ts";
import type { Chunk, PlanEntry } from "../../../src/modelgen/weights.ts";
import { errorBounds } from "./ggml-bounds.ts";
import { readGguf } from "./gguf-whole.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-gguf-options-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SPEC: ModelSpec = { ...PRESETS.tiny!, id: "kiln-gguf-options", layers: 1, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 512, vocab: 600 };

/** A value no random stream would give: a function of the plan entry's name length and the element's index. */
const valueAt = (e: PlanEntry, i: number) => (((i * 7919 + e.name.length * 31) % 1001) - 500) / 10000;

/** Every entry as the caller's own values, embeddings in two chunks (as row chunks arrive for large vocabularies). */
function* weights(_spec: ModelSpec, e: PlanEntry): Iterable<Chunk> {
  const split = e.kind === "embed" ? Math.floor(e.rows / 2) : e.rows;
  for (let rowStart = 0; rowStart < e.rows; rowStart += split) {
    const rows = Math.min(split, e.rows - rowStart);
    const data = Float32Array.from({ length: rows * e.cols }, (_, j) => valueAt(e, rowStart * e.cols + j));
    yield { data, rowStart, rows };
  }
}

test("weights, tokenizerKv and onProgress replace kiln's own", async () => {
  const tokenizerKv: GgufKv[] = [
    { key: "tokenizer.ggml.model", type: "string", value: "llama" },
    { key: "tokenizer.ggml.tokens", type: "string[]", value: Array.from({ length: SPEC.vocab }, (_, i) => `<t${i}>`) },
  ];
  const path = join(root, "custom.gguf");
  const seen: number[] = [];
  await writeGgufModel(SPEC, "q4_k_m", path, { weights, tokenizerKv, onProgress: (done, total) => seen.push(done / total) });
  expect(seen.at(-1)).toBe(1);
  const file = readGguf(path);
  expect(file.kv.get("tokenizer.ggml.model")).toBe("llama");
  expect((file.kv.get("tokenizer.ggml.tokens") as string[])[599]).toBe("<t599>");
  expect(file.kv.has("tokenizer.ggml.merges")).toBe(false); // kiln's BPE keys are gone, not merged in
  expect(file.kv.get("general.file_type")).toBe(15);
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  // ffn_down is the plan's down_proj as is ([out, in] rows): the caller's values within Q6_K's bound (layer 0 of 1 is the last eighth).
  const down = byName.get("blk.0.ffn_down.weight")!;
  expect(down.type).toBe(GGML_TYPE.Q6_K);
  const entry: PlanEntry = { name: "model.layers.0.mlp.down_proj.weight", kind: "linear", rows: 256, cols: 512 };
  const want = Float32Array.from({ length: 256 * 512 }, (_, i) => valueAt(entry, i));
  const got = decodeTensor(down.type, file.bytes.subarray(down.at), want.length);
  const bound = errorBounds(down.type, want);
  for (let i = 0; i < want.length; i++) if (!(Math.abs(got[i]! - want[i]!) <= bound[i]!)) throw new Error(`ffn_down[${i}]: ${got[i]} for ${want[i]}`);
  // The embedding's second chunk lands after the first: its last row is the caller's last row (Q4_K here).
  const embd = byName.get("token_embd.weight")!;
  expect(embd.type).toBe(GGML_TYPE.Q4_K);
  const embEntry: PlanEntry = { name: "model.embed_tokens.weight", kind: "embed", rows: SPEC.vocab, cols: 256 };
  const last = decodeTensor(embd.type, file.bytes.subarray(embd.at), SPEC.vocab * 256).subarray((SPEC.vocab - 1) * 256);
  const lastWant = Float32Array.from({ length: 256 }, (_, j) => valueAt(embEntry, (SPEC.vocab - 1) * 256 + j));
  const lastBound = errorBounds(embd.type, lastWant);
  for (let j = 0; j < 256; j++) expect(Math.abs(last[j]! - lastWant[j]!)).toBeLessThanOrEqual(lastBound[j]!);
  // 1-D tensors stay F32 and exact.
  const norm = byName.get("output_norm.weight")!;
  expect(norm.type).toBe(GGML_TYPE.F32);
  const normEntry: PlanEntry = { name: "model.norm.weight", kind: "norm", rows: 1, cols: 256 };
  expect(Array.from(decodeTensor(GGML_TYPE.F32, file.bytes.subarray(norm.at), 256))).toEqual(Array.from({ length: 256 }, (_, j) => Math.fround(valueAt(normEntry, j))));
});
