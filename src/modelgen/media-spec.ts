// The shapes of the vision and audio encoders a media model carries, their validation, and the layout they imply.

/** A small ViT (patch embedding, learned positions, pre-norm layers) and LLaVA's projector into the text hidden size. */
export interface VisionSpec {
  imageSize: number;
  patchSize: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  layerNormEps: number;
}

/** A Whisper-style encoder (two convs, sinusoidal positions, pre-norm layers), frame stacking and a projector. */
export interface AudioSpec {
  nMels: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  /** Encoder frames concatenated into one projector input (Ultravox's stack_factor). */
  stackFactor: number;
  layerNormEps: number;
}

/** The multimodal architecture a spec with encoders is written as (its folder layout follows from it). */
export type MediaArchitecture = "llava" | "ultravox" | "kiln-omni";

/** Fixed by the Whisper feature extractor the audio layouts use. */
export const AUDIO = { sampleRate: 16000, hopLength: 160, nFft: 400, chunkSeconds: 30, encoderDsFactor: 320 } as const;

/** The folder layout for a spec's encoders: null for a text-only model. */
export function mediaArchitecture(m: { vision?: VisionSpec; audio?: AudioSpec }): MediaArchitecture | null {
  if (m.vision && m.audio) return "kiln-omni";
  if (m.vision) return "llava";
  if (m.audio) return "ultravox";
  return null;
}

/** Image tokens per picture: one per patch, no CLS token. */
export function imageTokens(v: VisionSpec): number {
  return (v.imageSize / v.patchSize) ** 2;
}

/** Rows the audio encoder returns for `frames` log-mel frames: the stacked frames of the stride-2 conv plus the end row. */
export function audioFeatureCount(frames: number, stackFactor: number): number {
  return 1 + Math.ceil(Math.ceil(frames / 2) / stackFactor);
}

function positiveInts(o: object, what: string): void {
  for (const [k, v] of Object.entries(o)) {
    if (k === "layerNormEps") continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new Error(`spec.${what}.${k} must be a positive integer`);
  }
}

/** Throws with a reason if an encoder cannot be built (head splits, whole patches, a usable epsilon). */
export function validateMedia(m: { vision?: VisionSpec; audio?: AudioSpec }): void {
  for (const [what, e] of [["vision", m.vision], ["audio", m.audio]] as const) {
    if (!e) continue;
    positiveInts(e, what);
    if (e.hidden % e.heads !== 0) throw new Error(`spec.${what}.hidden must be a multiple of spec.${what}.heads`);
    if (!(e.layerNormEps > 0)) throw new Error(`spec.${what}.layerNormEps must be positive`);
  }
  if (m.vision && m.vision.imageSize % m.vision.patchSize !== 0) throw new Error("spec.vision.imageSize must be a multiple of spec.vision.patchSize");
  // The sinusoidal position table splits the hidden size into sine and cosine halves of at least two frequencies.
  if (m.audio && (m.audio.hidden % 2 !== 0 || m.audio.hidden < 4)) throw new Error("spec.audio.hidden must be even and at least 4");
}
