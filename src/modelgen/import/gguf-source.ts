// A GGUF file as an import source: its metadata as the spec, its tensors decoded from their ggml types a row range at
// a time (positioned reads: the file is never in memory whole), its tokenizer and chat template as tokenizer.json.
import { basename } from "node:path";
import { decodeTensor, ggmlTypeName } from "../gguf-blocks.ts";
import { GgufFile, type GgufTensor } from "../gguf-read.ts";
import { ggufTokenizer } from "./gguf-tokenizer.ts";
import { deinterleaveRotaryRows, ggufArchitecture, ggufName, specFromGguf } from "./gguf-spec.ts";
import type { ImportSource } from "./hf-folder.ts";
import { modelIdFrom } from "./model-id.ts";
import type { TensorStore } from "./weight-source.ts";

/** [rows, cols] in Hugging Face orientation: ggml's dims[0] is the contiguous one (a row's length). */
function shapeOf(t: GgufTensor): [number, number] {
  const cols = t.dims[0] ?? 1;
  return [t.elements / cols, cols];
}

export function openGgufFile(path: string, modelId: string | undefined): ImportSource {
  const file = GgufFile.open(path);
  try {
    const meta = (k: string) => file.kv.get(k);
    const arch = ggufArchitecture(meta);
    const byName = new Map(file.tensors.map((t) => [t.name, t]));
    const embed = byName.get("token_embd.weight");
    if (!embed) throw new Error(`gguf: ${path} has no token_embd.weight`);
    const freqs = byName.get("rope_freqs.weight");
    const name = meta("general.name");
    const spec = specFromGguf(
      meta,
      { vocab: shapeOf(embed)[0], hasOutput: byName.has("output.weight"), ...(freqs ? { ropeFreqs: decode(file, freqs, 0, freqs.elements) } : {}) },
      modelId ?? modelIdFrom(basename(path)),
      typeof name === "string" && name ? name : basename(path),
    );
    const find = (hf: string): GgufTensor | undefined => {
      const g = ggufName(hf, arch);
      return g ? byName.get(g) : undefined;
    };
    const store: TensorStore = {
      has: (n) => find(n) !== undefined,
      shape: (n) => shapeOf(find(n)!),
      rows: (n, row, rows) => {
        const t = find(n)!;
        const cols = shapeOf(t)[1];
        const values = decode(file, t, row * cols, rows * cols);
        // llama.cpp's "llama" files pair rotary rows differently; q and k come whole (fused parts), so regroup here.
        const rotary = arch === "llama" && /\.self_attn\.[qk]_proj\.weight$/.test(n);
        return rotary ? deinterleaveRotaryRows(values, rows / spec.headDim, spec.headDim, cols) : values;
      },
    };
    const tok = ggufTokenizer(file.kv);
    const id = (key: string) => (typeof meta(key) === "number" ? (meta(key) as number) : null);
    return {
      spec,
      tokenizer: { tokenizerJson: tok.tokenizerJson, tokenizerConfig: tok.tokenizerConfig, ids: { bos: id("tokenizer.ggml.bos_token_id"), eos: tok.endIds, pad: id("tokenizer.ggml.padding_token_id") } },
      store,
      describe: { format: "gguf", architecture: arch, file_type: typeof meta("general.file_type") === "number" ? meta("general.file_type") : null, types: typeCounts(file.tensors) },
      close: () => file.close(),
    };
  } catch (e) {
    file.close();
    throw e;
  }
}

function decode(file: GgufFile, t: GgufTensor, from: number, count: number): Float32Array {
  try {
    return decodeTensor(t.type, file.readTensorBytes(t, from, count), count);
  } catch (e) {
    throw new Error(`gguf: tensor ${t.name} (${ggmlTypeName(t.type)}): ${(e as Error).message}`);
  }
}

/** How many tensors of each ggml type the file holds (kiln.json's `source.types`: what a Q4_K_M file really mixes). */
function typeCounts(tensors: GgufTensor[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of tensors) out[ggmlTypeName(t.type)] = (out[ggmlTypeName(t.type)] ?? 0) + 1;
  return out;
}
