// Reads a sentence-embedding folder in the sentence-transformers layout (modules.json, the Pooling module's
// config.json, config.json, a tokenizer, onnx/model*.onnx with input_ids and attention_mask in, last_hidden_state out)
// into a registry entry; kiln.json, when present, gives the id, price and Matryoshka sizes.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { poolingMode, readModules, truncations, type EmbeddingLayout } from "./embedding-layout.ts";
import { dtypesFromFiles, infoIdFromFolder, type ModelInfo, parseCapabilities, parseDevice, parseIdentity, parsePricing } from "./manifest.ts";

/** What marks a folder as an embedding model. */
export const EMBEDDING_MARKER = "modules.json";

type Json = Record<string, unknown>;

function readJson(path: string, name: string): Json | unknown[] | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Json;
  } catch (e) {
    throw new Error(`${name} is not valid JSON (${(e as Error).message})`);
  }
}

function object(v: unknown, name: string): Json {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${name} must be a JSON object`);
  return v as Json;
}

/** The embedding layout of a folder: pooling and normalization from its modules, the size from its configs. */
export function embeddingFacts(dir: string, manifest: Json | null): { layout: EmbeddingLayout; contextLength: number; architecture: string } {
  const { poolingPath, normalize } = readModules(readJson(join(dir, EMBEDDING_MARKER), EMBEDDING_MARKER));
  const poolingFile = `${poolingPath}/config.json`;
  const pooling = readJson(join(dir, poolingFile), poolingFile);
  if (!pooling) throw new Error(`missing ${poolingFile}`);
  const poolingConfig = object(pooling, poolingFile);
  const config = object(readJson(join(dir, "config.json"), "config.json") ?? {}, "config.json");
  const dims = poolingConfig.word_embedding_dimension ?? config.hidden_size;
  if (typeof dims !== "number" || !Number.isInteger(dims) || dims < 1) throw new Error(`${poolingFile} has no usable word_embedding_dimension`);
  const ctx = config.max_position_embeddings ?? config.n_positions;
  if (typeof ctx !== "number" || !Number.isInteger(ctx) || ctx < 2) throw new Error("config.json has no usable max_position_embeddings");
  const declared = manifest?.embedding === undefined ? undefined : object(manifest.embedding, "kiln.json embedding").matryoshka_dimensions;
  const layout = { pooling: poolingMode(poolingConfig), normalize, dimensions: dims, truncations: truncations(declared, dims) };
  return { layout, contextLength: ctx, architecture: typeof config.model_type === "string" ? config.model_type : "unknown" };
}

/** The entry of an embedding model folder; throws with the reason it cannot be served. */
export function readEmbeddingFolder(dir: string, folderName: string): ModelInfo {
  for (const f of ["config.json", "tokenizer.json"]) if (!existsSync(join(dir, f))) throw new Error(`missing ${f}`);
  const onnxDir = join(dir, "onnx");
  const dtypes = dtypesFromFiles(existsSync(onnxDir) ? readdirSync(onnxDir) : []);
  if (!dtypes.length) throw new Error("no ONNX graph file under onnx/ (model.onnx)");
  const raw = readJson(join(dir, "kiln.json"), "kiln.json");
  const m = raw ? object(raw, "kiln.json") : null;
  const { layout, contextLength, architecture } = embeddingFacts(dir, m);
  const capabilities = { ...parseCapabilities(m ?? {}, false), embeddings: true };
  if (capabilities.chat || capabilities.vision || capabilities.audio || capabilities.tools || capabilities.reasoning || capabilities.image_generation) {
    throw new Error("an embedding model folder makes embeddings only: its capabilities may not include chat, tools, reasoning, vision, audio or image generation");
  }
  const defaultDtype = typeof m?.default_dtype === "string" && dtypes.includes(m.default_dtype) ? m.default_dtype : dtypes.includes("fp32") ? "fp32" : dtypes[0]!;
  return {
    ...(m ? parseIdentity(m) : { id: infoIdFromFolder(folderName), displayName: folderName, ownedBy: "operator", created: 0 }),
    architecture,
    contextLength,
    defaultDtype,
    dtypes,
    capabilities,
    pricing: parsePricing(m ?? {}),
    batching: { maxBatch: 1, leftPadding: "unsafe" },
    int8MaxLevel: null,
    promptFormat: null,
    media: null,
    diffusion: null,
    device: m ? parseDevice(m) : null,
    publicPrefixes: [],
    embedding: layout,
  };
}
