// kiln.json, the model manifest: parsing and validation, plus defaults derived from a transformers.js config.json.
import { INT8_MAX_LEVEL } from "../modelgen/quantize.ts";
import { DEVICE_SETTINGS, type DeviceSetting } from "../devices/device-choice.ts";
import { resolvePromptFormat } from "../inference/prompt-format.ts";
import type { DiffusionLayout } from "./diffusion-layout.ts";
import type { EmbeddingLayout } from "./embedding-layout.ts";
import { type MediaLayout, parseMediaBlock } from "./media-layout.ts";

export interface Capabilities {
  chat: boolean;
  tools: boolean;
  reasoning: boolean;
  vision: boolean;
  /** Takes audio input (and a video's audio track); absent in a kiln.json: false. */
  audio: boolean;
  image_generation: boolean;
  /** Makes embeddings (POST /v1/embeddings): set for sentence-embedding folders (src/models/embedding-folder.ts); absent: false. */
  embeddings?: boolean;
}

export interface ModelInfo {
  id: string;
  displayName: string;
  ownedBy: string;
  /** Unix seconds. */
  created: number;
  architecture: string;
  contextLength: number;
  defaultDtype: string;
  dtypes: string[];
  capabilities: Capabilities;
  /** Currency units per million tokens, and per image; prompt tokens read from the prefix cache at `cachedInputPerMillion`. */
  pricing: { inputPerMillion: number; cachedInputPerMillion: number; outputPerMillion: number; perImage: number | null };
  /**
   * "exact": left-padded rows give the same logits as alone, so rows of different lengths may share a batch.
   * `rightPadded`: the formats whose graph attends by GroupQueryAttention (an operator's transformers.js export), which
   * reads each row's cache from column 0: their rows are right-padded instead (workers/text/device/), and batch too.
   */
  batching: { maxBatch: number; leftPadding: "exact" | "unsafe"; rightPadded?: string[] };
  /** Largest |level| of the int8 weights when the folder declares it (kiln's own builds do); null if unknown. */
  int8MaxLevel: number | null;
  /** kiln.json's `prompt_format` as declared (checked here, resolved against the tokenizer when it loads). */
  promptFormat: Record<string, unknown> | null;
  /** How images and audio enter the prompt (null: a text-only model). */
  media: MediaLayout | null;
  /** How an image model renders (null: not an image model). */
  diffusion: DiffusionLayout | null;
  /** kiln.json's `device` (cpu | webgpu | auto), which wins over KILN_DEVICE; null: the server's setting. */
  device: DeviceSetting | null;
  /**
   * kiln.json's `public_prefixes`: system prompts the operator declares public. The cached KV of a prompt's opening
   * that matches one is shared by every team (other prefixes stay within the team that sent them).
   */
  publicPrefixes: string[];
  /** How an embedding model pools and normalizes (absent: not an embedding model). */
  embedding?: EmbeddingLayout;
}

/** The kiln.json format this kiln writes. 2: int8 weights are 7-bit and declared in `quantization.int8_max_level`. */
export const MANIFEST_VERSION = 2;


export const MODEL_ID_RE = /^[a-z0-9]+(?:[.-][a-z0-9]+)*$/;
/** Model ids carry a version number: a digit somewhere after the first hyphen-separated word. */
export function isValidModelId(id: string): boolean {
  return MODEL_ID_RE.test(id) && id.includes("-") && /\d/.test(id.slice(id.indexOf("-")));
}

/** transformers.js's file name suffix of each dtype: `<graph><suffix>.onnx`. */
const DTYPE_SUFFIXES: Record<string, string> = {
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
  q4f16: "_q4f16",
  bnb4: "_bnb4",
};

/** The decoder graph of a text model (`model`) or of a multimodal one (`decoder_model_merged`, beside its encoders). */
export type DecoderGraph = "model" | "decoder_model_merged";

/** transformers.js's file-name suffix of a dtype ('' for fp32, '_q4' for q4...); throws for an unknown dtype. */
export function dtypeSuffix(dtype: string): string {
  const suffix = DTYPE_SUFFIXES[dtype];
  if (suffix === undefined) throw new Error(`unknown dtype "${dtype}"`);
  return suffix;
}

export function onnxFileForDtype(dtype: string, graph: DecoderGraph = "model"): string | undefined {
  const suffix = DTYPE_SUFFIXES[dtype];
  return suffix === undefined ? undefined : `${graph}${suffix}.onnx`;
}

/**
 * kiln's one-token graph of a dtype beside its main graph (`model_step_q4.onnx`): the builder writes it, the worker
 * runs the small-step format's one-token passes on it when the folder has it.
 */
export function stepGraphFile(dtype: string): string {
  return `model_step${dtypeSuffix(dtype)}.onnx`;
}

/** The dtypes whose decoder graph file is present in a folder's onnx/ listing. */
export function dtypesFromFiles(onnxFiles: string[], graph: DecoderGraph = "model"): string[] {
  return Object.keys(DTYPE_SUFFIXES).filter((dtype) => onnxFiles.includes(onnxFileForDtype(dtype, graph)!));
}

type Json = Record<string, unknown>;

function obj(v: unknown, what: string): Json {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${what} must be an object`);
  return v as Json;
}
function str(o: Json, k: string, fallback?: string): string {
  const v = o[k] ?? fallback;
  if (typeof v !== "string" || !v) throw new Error(`"${k}" must be a non-empty string`);
  return v;
}
function num(o: Json, k: string, fallback?: number, min = 0): number {
  const v = o[k] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min) throw new Error(`"${k}" must be a number ≥ ${min}`);
  return v;
}
function bool(o: Json, k: string, fallback = false): boolean {
  const v = o[k] ?? fallback;
  if (typeof v !== "boolean") throw new Error(`"capabilities.${k}" must be true or false`);
  return v;
}

/** Validates a parsed kiln.json against the dtypes whose files exist; throws with a reason on any problem. */
export function parseManifest(raw: unknown, presentDtypes: string[]): ModelInfo {
  const m = obj(raw, "kiln.json");
  const identity = parseIdentity(m);
  const dtypes = Array.isArray(m.dtypes) ? (m.dtypes as unknown[]).map(String) : presentDtypes;
  const missing = dtypes.filter((d) => !presentDtypes.includes(d));
  if (missing.length) throw new Error(`dtype ${missing.join(", ")} has no graph file under onnx/`);
  if (!dtypes.length) throw new Error("no ONNX graph file under onnx/");
  const defaultDtype = str(m, "default_dtype", dtypes[0]);
  if (!dtypes.includes(defaultDtype)) throw new Error(`default_dtype "${defaultDtype}" is not among dtypes`);
  const batching = obj(m.batching ?? {}, "batching");
  const leftPadding = batching.left_padding ?? "unsafe";
  if (leftPadding !== "exact" && leftPadding !== "unsafe") throw new Error(`"batching.left_padding" must be "exact" or "unsafe"`);
  const int8MaxLevel = int8Level(m);
  if (dtypes.includes("int8") && m.build !== undefined && !(int8MaxLevel !== null && int8MaxLevel <= INT8_MAX_LEVEL)) {
    throw new Error(
      "its int8 weights were built by an older kiln with the full int8 range, which ONNX Runtime computes wrong on CPUs " +
        "without VNNI; rebuild the folder with `kiln models build` (or remove int8 from its dtypes)",
    );
  }
  const promptFormat = m.prompt_format === undefined ? null : obj(m.prompt_format, "prompt_format");
  if (promptFormat) resolvePromptFormat(promptFormat, "", () => false);
  const capabilities = parseCapabilities(m, true);
  if (capabilities.embeddings) throw new Error(`"capabilities.embeddings" is for embedding folders: the sentence-transformers layout has modules.json`);
  const media = parseMediaBlock(m.media, capabilities);
  return {
    ...identity,
    architecture: str(m, "architecture", "llama"),
    contextLength: num(m, "context_length", undefined, 16),
    defaultDtype,
    dtypes,
    capabilities,
    pricing: parsePricing(m),
    batching: { maxBatch: Math.floor(num(batching, "max_batch", 8, 1)), leftPadding },
    int8MaxLevel,
    promptFormat,
    media,
    diffusion: null,
    device: parseDevice(m),
    publicPrefixes: parsePublicPrefixes(m),
  };
}

/** kiln.json's optional `public_prefixes`: a list of non-empty strings. */
export function parsePublicPrefixes(m: Json): string[] {
  const v = m.public_prefixes ?? [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && x.length > 0)) throw new Error(`"public_prefixes" must be a list of non-empty strings`);
  return v as string[];
}

/** kiln.json's optional `device`. */
export function parseDevice(m: Json): DeviceSetting | null {
  if (m.device === undefined) return null;
  if (!DEVICE_SETTINGS.includes(m.device as DeviceSetting)) throw new Error(`"device" must be one of ${DEVICE_SETTINGS.join(", ")}`);
  return m.device as DeviceSetting;
}

/** The fields every kiln.json has, whatever the model's kind: id, names, creation time; its format version checked. */
export function parseIdentity(m: Json): Pick<ModelInfo, "id" | "displayName" | "ownedBy" | "created"> {
  const version = m.kiln_manifest ?? MANIFEST_VERSION;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) throw new Error(`"kiln_manifest" must be a positive integer`);
  if (version > MANIFEST_VERSION) throw new Error(`kiln.json is format ${version}, newer than this kiln reads (${MANIFEST_VERSION}): upgrade kiln`);
  const id = str(m, "id");
  if (!isValidModelId(id)) throw new Error(`id "${id}" must be lowercase, hyphenated and carry a version number`);
  return { id, displayName: str(m, "display_name", id), ownedBy: str(m, "owned_by", "kiln"), created: num(m, "created", 0) };
}

/** kiln.json's `capabilities` (absent: chat only, when `chat` is the default). */
export function parseCapabilities(m: Json, chatByDefault: boolean): Capabilities {
  const caps = obj(m.capabilities ?? {}, "capabilities");
  return {
    chat: bool(caps, "chat", chatByDefault),
    tools: bool(caps, "tools"),
    reasoning: bool(caps, "reasoning"),
    vision: bool(caps, "vision"),
    audio: bool(caps, "audio"),
    image_generation: bool(caps, "image_generation"),
    // Written only when true, as folders that predate it leave it out.
    ...(bool(caps, "embeddings") ? { embeddings: true } : {}),
  };
}

/**
 * kiln.json's `pricing`: per million tokens, and per image (null: images are not priced). Cached input (prompt tokens
 * read from the prefix cache) costs `cached_input_per_million`, by default the input price: nothing changes unless set.
 */
export function parsePricing(m: Json): ModelInfo["pricing"] {
  const pricing = obj(m.pricing ?? {}, "pricing");
  const perImage = pricing.per_image ?? null;
  if (perImage !== null && (typeof perImage !== "number" || !Number.isFinite(perImage) || perImage < 0)) throw new Error(`"pricing.per_image" must be a number ≥ 0 or null`);
  const inputPerMillion = num(pricing, "input_per_million", 0);
  return {
    inputPerMillion,
    cachedInputPerMillion: num(pricing, "cached_input_per_million", inputPerMillion),
    outputPerMillion: num(pricing, "output_per_million", 0),
    perImage: perImage as number | null,
  };
}

function int8Level(m: Json): number | null {
  if (m.quantization === undefined) return null;
  const v = obj(m.quantization, "quantization").int8_max_level;
  if (v === undefined) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 127) throw new Error(`"quantization.int8_max_level" must be an integer in 1…127`);
  return v;
}

/** The id of a folder without kiln.json: its name, lowercased and hyphenated; throws when that is no valid id. */
export function infoIdFromFolder(folderName: string): string {
  const id = folderName.toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-+|-+$/g, "");
  if (!isValidModelId(id)) throw new Error(`folder name "${folderName}" gives id "${id}", which is not lowercase-hyphenated with a version number; add a kiln.json with an id`);
  return id;
}

/** Defaults for a plain transformers.js folder (no kiln.json), read from its config.json and files. */
export function infoFromConfig(
  folderName: string,
  config: unknown,
  presentDtypes: string[],
  hasChatTemplate: boolean,
  groupQueryAttention: string[],
  media: MediaLayout | null = null,
): ModelInfo {
  const c = obj(config, "config.json");
  // Multimodal configs keep the decoder's settings under text_config.
  const text = media && c.text_config && typeof c.text_config === "object" ? (c.text_config as Json) : c;
  const id = infoIdFromFolder(folderName);
  if (!presentDtypes.length) throw new Error("no ONNX graph file under onnx/");
  const tjs = (c["transformers.js_config"] ?? {}) as Json;
  const preferred = typeof tjs.dtype === "string" && presentDtypes.includes(tjs.dtype) ? tjs.dtype : undefined;
  const ctx = text.max_position_embeddings;
  if (typeof ctx !== "number" || ctx < 16) throw new Error(`config.json has no usable max_position_embeddings`);
  return {
    id,
    displayName: folderName,
    ownedBy: "operator",
    created: 0,
    architecture: typeof c.model_type === "string" ? c.model_type : "unknown",
    contextLength: ctx,
    defaultDtype: preferred ?? (presentDtypes.includes("q4") ? "q4" : presentDtypes[0]!),
    dtypes: presentDtypes,
    capabilities: { chat: hasChatTemplate, tools: false, reasoning: false, vision: !!media?.image, audio: !!media?.audio, image_generation: false },
    pricing: { inputPerMillion: 0, cachedInputPerMillion: 0, outputPerMillion: 0, perImage: null },
    // GroupQueryAttention cannot take left padding: a text folder's such graphs batch right-padded rows instead (a
    // multimodal decoder, fed embeddings, decodes one sequence at a time).
    batching: groupQueryAttention.length
      ? { maxBatch: 8, leftPadding: "unsafe", ...(media ? {} : { rightPadded: groupQueryAttention }) }
      : { maxBatch: 8, leftPadding: "exact" },
    int8MaxLevel: null,
    promptFormat: null,
    media,
    diffusion: null,
    device: null,
    publicPrefixes: [],
  };
}
