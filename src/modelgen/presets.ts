// Every preset `kiln models build` knows, text, image and embedding, looked up by name.
import { IMAGE_PRESETS } from "./diffusion/image-presets.ts";
import type { ImageModelSpec } from "./diffusion/image-spec.ts";
import { EMBEDDING_PRESETS, type EmbeddingModelSpec } from "./embedding-spec.ts";
import { PRESETS, type ModelSpec } from "./spec.ts";

export type AnySpec = ModelSpec | ImageModelSpec | EmbeddingModelSpec;

/** Preset names: the text (and multimodal) presets, then the image ones, then the embedding ones. */
export const PRESET_NAMES: readonly string[] = Object.freeze([...Object.keys(PRESETS), ...Object.keys(IMAGE_PRESETS), ...Object.keys(EMBEDDING_PRESETS)]);

export function presetSpec(name: string): AnySpec | undefined {
  if (Object.hasOwn(PRESETS, name)) return PRESETS[name];
  if (Object.hasOwn(IMAGE_PRESETS, name)) return IMAGE_PRESETS[name];
  return Object.hasOwn(EMBEDDING_PRESETS, name) ? EMBEDDING_PRESETS[name] : undefined;
}
