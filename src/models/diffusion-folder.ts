// Reads an image model folder in the layout ONNX Runtime exports of Stable Diffusion have (model_index.json,
// scheduler/, tokenizer/, text_encoder/, unet/, vae_decoder/, optional vae_encoder/) into a registry entry: the
// configs say the VAE and UNet scales and the text length, kiln.json (when present) the id, price and sizes.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type DiffusionFolderFacts, parseDiffusionLayout } from "./diffusion-layout.ts";
import { infoIdFromFolder, type ModelInfo, parseCapabilities, parseDevice, parseIdentity, parsePricing } from "./manifest.ts";

/** What marks a folder as an image model. */
export const DIFFUSION_MARKER = "model_index.json";

const REQUIRED = ["scheduler/scheduler_config.json", "text_encoder/model.onnx", "unet/model.onnx", "vae_decoder/model.onnx"];
/** CLIP's sequence length, which every Stable Diffusion text encoder has. */
const DEFAULT_TEXT_LENGTH = 77;

type Json = Record<string, unknown>;

function readJson(path: string, name: string): Json | null {
  if (!existsSync(path)) return null;
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${name} is not valid JSON (${(e as Error).message})`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${name} must be a JSON object`);
  return v as Json;
}

/** 2^(levels − 1) for a config's block_out_channels (the last level does not downsample); `fallback` without one. */
function scaleOf(config: Json | null, name: string, fallback: number): number {
  const blocks = config?.block_out_channels;
  if (blocks === undefined) return fallback;
  if (!Array.isArray(blocks) || !blocks.length || blocks.length > 8) throw new Error(`${name} block_out_channels must be a list of 1 to 8 levels`);
  return 2 ** (blocks.length - 1);
}

/** The tokenizer a folder ships: tokenizer.json, or CLIP's vocab.json and merges.txt. */
export function hasTokenizer(dir: string): boolean {
  const t = join(dir, "tokenizer");
  return existsSync(join(t, "tokenizer.json")) || (existsSync(join(t, "vocab.json")) && existsSync(join(t, "merges.txt")));
}

/** What the folder's files and configs say; throws naming a missing part. */
export function diffusionFacts(dir: string): DiffusionFolderFacts {
  for (const f of REQUIRED) if (!existsSync(join(dir, f))) throw new Error(`missing ${f}`);
  if (!hasTokenizer(dir)) throw new Error("missing tokenizer/tokenizer.json (or tokenizer/vocab.json and merges.txt)");
  const vae = readJson(join(dir, "vae_decoder", "config.json"), "vae_decoder/config.json");
  const unet = readJson(join(dir, "unet", "config.json"), "unet/config.json");
  const text = readJson(join(dir, "text_encoder", "config.json"), "text_encoder/config.json");
  const vaeScale = scaleOf(vae, "vae_decoder/config.json", 8);
  const unetScale = scaleOf(unet, "unet/config.json", 8);
  const sample = unet?.sample_size;
  const textLength = text?.max_position_embeddings ?? DEFAULT_TEXT_LENGTH;
  if (typeof textLength !== "number" || !Number.isInteger(textLength) || textLength < 2) throw new Error("text_encoder/config.json max_position_embeddings must be a whole number ≥ 2");
  return {
    vaeScale,
    unetScale,
    nativeResolution: typeof sample === "number" && Number.isInteger(sample) && sample > 0 ? sample * vaeScale : null,
    textLength,
    edits: existsSync(join(dir, "vae_encoder", "model.onnx")),
  };
}

/** The entry of an image model folder; throws with the reason it cannot be served. */
export function readDiffusionFolder(dir: string, folderName: string): ModelInfo {
  readJson(join(dir, DIFFUSION_MARKER), DIFFUSION_MARKER);
  const facts = diffusionFacts(dir);
  const manifest = readJson(join(dir, "kiln.json"), "kiln.json");
  const m = manifest ?? {};
  const identity = manifest ? parseIdentity(m) : { id: infoIdFromFolder(folderName), displayName: folderName, ownedBy: "operator", created: 0 };
  const capabilities = { ...parseCapabilities(m, false), image_generation: true };
  if (capabilities.chat || capabilities.vision || capabilities.audio || capabilities.tools || capabilities.reasoning || capabilities.embeddings) {
    throw new Error("an image model folder generates images only: its capabilities may not include chat, tools, reasoning, vision, audio or embeddings");
  }
  const diffusion = parseDiffusionLayout(m.image, facts);
  return {
    ...identity,
    architecture: typeof m.architecture === "string" && m.architecture ? m.architecture : "stable-diffusion",
    contextLength: diffusion.textLength,
    defaultDtype: "fp32",
    dtypes: ["fp32"],
    capabilities,
    pricing: parsePricing(m),
    batching: { maxBatch: diffusion.maxBatch, leftPadding: "unsafe" },
    int8MaxLevel: null,
    promptFormat: null,
    media: null,
    diffusion,
    device: parseDevice(m),
    publicPrefixes: [],
  };
}
