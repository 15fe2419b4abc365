// Writes a kiln embedding model in the sentence-transformers folder layout operators have: config.json (bert),
// tokenizer.json and tokenizer_config.json, onnx/model.onnx, modules.json, 1_Pooling/config.json, 2_Normalize/,
// sentence_bert_config.json, plus kiln.json with capabilities.embeddings and the Matryoshka sizes.
import { combineHashes, MANIFEST_FILE } from "./content-hash.ts";
import { embeddingGraph } from "./embedding-graph.ts";
import { folderWriter } from "./folder-writer.ts";
import { embeddingSpecHash, type EmbeddingModelSpec, validateEmbeddingSpec } from "./embedding-spec.ts";
import { CREATED } from "./model-files.ts";
import { buildTokenizer } from "./tokenizer.ts";

const POOLING_DIR = "1_Pooling";
const NORMALIZE_DIR = "2_Normalize";

/** modules.json: the transformer, then pooling, then (when the model normalizes) unit length. */
export function modulesJson(spec: EmbeddingModelSpec): Record<string, unknown>[] {
  const modules: Record<string, unknown>[] = [
    { idx: 0, name: "0", path: "", type: "sentence_transformers.models.Transformer" },
    { idx: 1, name: "1", path: POOLING_DIR, type: "sentence_transformers.models.Pooling" },
  ];
  if (spec.normalize) modules.push({ idx: 2, name: "2", path: NORMALIZE_DIR, type: "sentence_transformers.models.Normalize" });
  return modules;
}

/** 1_Pooling/config.json in sentence-transformers' keys: exactly one mode on. */
export function poolingConfig(spec: EmbeddingModelSpec): Record<string, unknown> {
  return {
    word_embedding_dimension: spec.hidden,
    pooling_mode_cls_token: spec.pooling === "cls",
    pooling_mode_mean_tokens: spec.pooling === "mean",
    pooling_mode_max_tokens: false,
    pooling_mode_mean_sqrt_len_tokens: false,
    pooling_mode_weightedmean_tokens: false,
    pooling_mode_lasttoken: spec.pooling === "lasttoken",
    include_prompt: true,
  };
}

function bertConfig(spec: EmbeddingModelSpec, padId: number): Record<string, unknown> {
  return {
    architectures: ["BertModel"],
    model_type: "bert",
    vocab_size: spec.vocab,
    hidden_size: spec.hidden,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    intermediate_size: spec.intermediate,
    hidden_act: "gelu",
    max_position_embeddings: spec.maxPositions,
    type_vocab_size: 2,
    layer_norm_eps: spec.layerNormEps,
    pad_token_id: padId,
    position_embedding_type: "absolute",
  };
}

function embeddingManifest(spec: EmbeddingModelSpec, build: { specHash: string; contentHash: string }): Record<string, unknown> {
  return {
    kiln_manifest: 2,
    id: spec.id,
    display_name: spec.displayName,
    owned_by: "kiln",
    created: CREATED,
    architecture: "bert",
    capabilities: { chat: false, embeddings: true },
    pricing: { input_per_million: 0, output_per_million: 0 },
    embedding: { matryoshka_dimensions: spec.matryoshka },
    build: { seed: spec.seed, spec_hash: build.specHash, content_hash: build.contentHash },
  };
}

/** Writes the whole folder into `outDir` (absent or empty). */
export async function buildEmbeddingModel(opts: { spec: EmbeddingModelSpec; outDir: string }): Promise<{ dir: string; files: string[] }> {
  const { spec, outDir } = opts;
  validateEmbeddingSpec(spec);
  const { hashes, write, writeJson } = folderWriter(outDir, "buildEmbeddingModel", ["onnx", POOLING_DIR, NORMALIZE_DIR]);

  const tok = buildTokenizer(spec.vocab, spec.maxPositions);
  // An encoder reads the whole input at once: no chat template, and padding goes on the right.
  const { chat_template: _template, ...tokenizerConfig } = tok.tokenizerConfig;
  writeJson("tokenizer.json", tok.tokenizerJson);
  writeJson("tokenizer_config.json", { ...tokenizerConfig, padding_side: "right" });
  writeJson("config.json", bertConfig(spec, tok.ids.endOfText));
  writeJson("modules.json", modulesJson(spec));
  writeJson(`${POOLING_DIR}/config.json`, poolingConfig(spec));
  writeJson("sentence_bert_config.json", { max_seq_length: spec.maxPositions, do_lower_case: false });
  write("onnx/model.onnx", embeddingGraph(spec).encode("kiln-bert"));
  writeJson(MANIFEST_FILE, embeddingManifest(spec, { specHash: embeddingSpecHash(spec), contentHash: combineHashes(hashes) }));
  return { dir: outDir, files: Object.keys(hashes).sort() };
}
