// An imported model's weights in the order kiln's builder asks for them: each plan entry's rows read from the source
// (a safetensors folder or a GGUF file, both seen through Hugging Face tensor names), so no tensor is held twice.
import type { WeightSource } from "../build.ts";
import type { Chunk, PlanEntry } from "../weights.ts";

/** A source of tensors by their Hugging Face names, in Hugging Face orientation ([out, in] for linear layers). */
export interface TensorStore {
  has(name: string): boolean;
  /** [rows, cols]: a 1-D tensor is one row. */
  shape(name: string): [number, number];
  /** Rows [row, row + rows) as float32. */
  rows(name: string, row: number, rows: number): Float32Array;
}

/** Embedding and head rows come in chunks of about this many values, so a 128k vocabulary never sits whole in memory. */
const CHUNK_VALUES = 1 << 22;

/** The builder's weight source over `store`: fused tensors are their parts concatenated, large tables come in row chunks. */
export function storeWeights(store: TensorStore): WeightSource {
  return function* (e: PlanEntry): Generator<Chunk> {
    // Checkpoints that store a fused tensor (Phi-3's qkv_proj, gate_up_proj) give it whole; others give its parts.
    if (e.parts && !store.has(e.name)) {
      const data = new Float32Array(e.rows * e.cols);
      let at = 0;
      for (const p of e.parts) {
        const [r, c] = expectShape(store, p.name, undefined, p.size);
        data.set(store.rows(p.name, 0, r), at);
        at += r * c;
      }
      if (at !== data.length) throw new Error(`${e.name}: its parts hold ${at} values, the model needs ${data.length}`);
      yield { data, rowStart: 0, rows: e.rows };
      return;
    }
    expectShape(store, e.name, e.rows, e.rows * e.cols);
    const per = e.kind === "embed" || e.kind === "head" ? Math.max(1, Math.floor(CHUNK_VALUES / e.cols)) : e.rows;
    for (let r = 0; r < e.rows; r += per) {
      const rows = Math.min(per, e.rows - r);
      yield { data: store.rows(e.name, r, rows), rowStart: r, rows };
    }
  };
}

/** The tensor's shape, checked against what the spec needs (its row count when given, and its element count). */
function expectShape(store: TensorStore, name: string, rows: number | undefined, elements: number): [number, number] {
  if (!store.has(name)) throw new Error(`tensor ${name} is missing`);
  const [r, c] = store.shape(name);
  if ((rows !== undefined && r !== rows) || r * c !== elements) {
    throw new Error(`tensor ${name} is ${r}×${c}; the model's config needs ${rows ?? "?"} rows and ${elements} values`);
  }
  return [r, c];
}
