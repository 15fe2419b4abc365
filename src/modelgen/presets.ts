// Every preset `kiln models build` knows, text and image, looked up by name.
import { IMAGE_PRESETS } from "./diffusion/image-presets.ts";
import type { ImageModelSpec } from "./diffusion/image-spec.ts";
import { PRESETS, type ModelSpec } from "./spec.ts";

export type AnySpec = ModelSpec | ImageModelSpec;

/** Preset names: the text (and multimodal) presets, then the image ones. */
export const PRESET_NAMES: readonly string[] = Object.freeze([...Object.keys(PRESETS), ...Object.keys(IMAGE_PRESETS)]);

export function presetSpec(name: string): AnySpec | undefined {
  return Object.hasOwn(PRESETS, name) ? PRESETS[name] : Object.hasOwn(IMAGE_PRESETS, name) ? IMAGE_PRESETS[name] : undefined;
}
