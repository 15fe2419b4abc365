// How a multimodal model places media in its prompt: which token stands for an image or an audio clip and how many
// rows one takes. Read from kiln.json's `media` block, or derived from a transformers.js folder's own configs.

/** An image becomes `tokens` rows of the image token (LLaVA: one per patch of the `size`×`size` input). */
export interface ImageLayout {
  token: string;
  tokenId: number;
  size: number;
  patchSize: number;
  tokens: number;
}

/** Audio becomes rows of the audio token: per clip of at most `chunkSeconds`, 1 + ⌈round(samples / encoderDsFactor) / stackFactor⌉. */
export interface AudioLayout {
  token: string;
  tokenId: number;
  sampleRate: number;
  hopLength: number;
  nMels: number;
  encoderDsFactor: number;
  stackFactor: number;
  chunkSeconds: number;
}

export interface MediaLayout {
  /** llava, ultravox, kiln-omni: the graph layout the worker runs. */
  layout: string;
  image: ImageLayout | null;
  audio: AudioLayout | null;
}

/** kiln's media intake decodes every clip to this rate: a model that wants another is not servable as is. */
export const DECODED_SAMPLE_RATE = 16_000;

type Json = Record<string, unknown>;

function object(v: unknown, what: string): Json {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${what} must be an object`);
  return v as Json;
}

function count(o: Json, key: string, what: string, fallback?: number): number {
  const v = o[key] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new Error(`"${what}.${key}" must be a positive integer`);
  return v;
}

function tokenText(o: Json, key: string, what: string, fallback?: string): string {
  const v = o[key] ?? fallback;
  if (typeof v !== "string" || !v) throw new Error(`"${what}.${key}" must be a non-empty string`);
  return v;
}

function tokenId(o: Json, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new Error(`"${what}.${key}" must be a token id`);
  return v;
}

function imageLayout(o: Json, what: string): ImageLayout {
  const size = count(o, "size", what);
  const patchSize = count(o, "patch_size", what);
  if (size % patchSize !== 0) throw new Error(`"${what}.size" must be a multiple of its patch_size`);
  const tokens = count(o, "tokens", what, (size / patchSize) ** 2);
  return { token: tokenText(o, "token", what), tokenId: tokenId(o, "token_id", what), size, patchSize, tokens };
}

function audioLayout(o: Json, what: string): AudioLayout {
  const sampleRate = count(o, "sample_rate", what, DECODED_SAMPLE_RATE);
  if (sampleRate !== DECODED_SAMPLE_RATE) throw new Error(`"${what}.sample_rate" must be ${DECODED_SAMPLE_RATE}: kiln decodes audio at that rate`);
  const hopLength = count(o, "hop_length", what, 160);
  return {
    token: tokenText(o, "token", what),
    tokenId: tokenId(o, "token_id", what),
    sampleRate,
    hopLength,
    nMels: count(o, "n_mels", what, 80),
    encoderDsFactor: count(o, "encoder_ds_factor", what, 2 * hopLength),
    stackFactor: count(o, "stack_factor", what, 8),
    chunkSeconds: count(o, "chunk_seconds", what, 30),
  };
}

/** kiln.json's `media` block, checked against the capabilities the manifest declares. */
export function parseMediaBlock(raw: unknown, caps: { vision: boolean; audio: boolean }): MediaLayout | null {
  if (raw === undefined || raw === null) {
    if (caps.vision || caps.audio) throw new Error(`capabilities.vision and capabilities.audio need a "media" block saying how media enter the prompt`);
    return null;
  }
  const m = object(raw, "media");
  const image = m.image === undefined || m.image === null ? null : imageLayout(object(m.image, "media.image"), "media.image");
  const audio = m.audio === undefined || m.audio === null ? null : audioLayout(object(m.audio, "media.audio"), "media.audio");
  if (caps.vision !== (image !== null)) throw new Error(`capabilities.vision must be true exactly when "media.image" is given`);
  if (caps.audio !== (audio !== null)) throw new Error(`capabilities.audio must be true exactly when "media.audio" is given`);
  return { layout: tokenText(m, "layout", "media"), image, audio };
}

/** The configs of a transformers.js multimodal folder (processor and preprocessor configs may be absent). */
export interface FolderConfigs {
  config: Json;
  processor: Json | null;
  preprocessor: Json | null;
}

/** The image side of a LLaVA folder: config.json's image token, the processor's patch size, the crop size. */
function llavaImage(f: FolderConfigs): ImageLayout {
  const proc = f.processor ?? {};
  const pre = f.preprocessor ?? {};
  const token = tokenText(proc, "image_token", "processor_config.json", "<image>");
  const id = f.config.image_token_index ?? f.config.image_token_id;
  const crop = (pre.crop_size ?? pre.size) as Json | number | undefined;
  const side = typeof crop === "number" ? crop : (crop?.height ?? crop?.shortest_edge);
  if (typeof side !== "number" || !Number.isInteger(side) || side < 1) throw new Error("preprocessor_config.json names no image size (crop_size or size)");
  const patchSize = count(proc, "patch_size", "processor_config.json", (object(f.config.vision_config ?? {}, "vision_config").patch_size as number | undefined) ?? undefined);
  const extra = proc.num_additional_image_tokens ?? 0;
  if (typeof extra !== "number" || !Number.isInteger(extra) || extra < 0) throw new Error(`"processor_config.json.num_additional_image_tokens" must be an integer ≥ 0`);
  // As transformers' LlavaProcessor: the "default" feature strategy drops the CLS row the extra token counts.
  const dropped = f.config.vision_feature_select_strategy === "default" && extra > 0 ? 1 : 0;
  return imageLayout({ token, token_id: id, size: side, patch_size: patchSize, tokens: Math.floor(side / patchSize) ** 2 + extra - dropped }, "config.json");
}

/** The audio side of an Ultravox folder: its audio token, stack factor and Whisper feature extractor settings. */
function ultravoxAudio(f: FolderConfigs): AudioLayout {
  const proc = f.processor ?? {};
  const pre = f.preprocessor ?? {};
  const id = f.config.audio_token_index ?? f.config.audio_token_id;
  return audioLayout(
    {
      token: proc.audio_placeholder ?? "<|audio|>",
      token_id: id,
      sample_rate: pre.sampling_rate,
      hop_length: pre.hop_length,
      n_mels: pre.feature_size,
      encoder_ds_factor: proc.encoder_ds_factor,
      stack_factor: proc.stack_factor ?? f.config.stack_factor,
      chunk_seconds: pre.chunk_length,
    },
    "config.json",
  );
}

/** The model types whose folders kiln reads without a kiln.json, and the media each takes. */
const FOLDER_LAYOUTS: Record<string, (f: FolderConfigs) => MediaLayout> = {
  llava: (f) => ({ layout: "llava", image: llavaImage(f), audio: null }),
  ultravox: (f) => ({ layout: "ultravox", image: null, audio: ultravoxAudio(f) }),
};

/** The media layout of a multimodal transformers.js folder without a kiln.json; throws for a type kiln cannot run. */
export function layoutFromFolder(f: FolderConfigs): MediaLayout {
  const type = f.config.model_type;
  const derive = typeof type === "string" ? FOLDER_LAYOUTS[type] : undefined;
  if (!derive) throw new Error(`model_type "${String(type)}" is a multimodal layout kiln does not run (it runs ${Object.keys(FOLDER_LAYOUTS).join(", ")}); add a kiln.json with a "media" block`);
  return derive(f);
}

/** Prompt rows one audio clip of `samples` samples takes (the clip split into pieces of at most chunkSeconds). */
export function audioTokens(layout: AudioLayout, samples: number): number {
  return audioPieces(layout, samples).reduce((sum, p) => sum + p.tokens, 0);
}

/**
 * Shortest piece the encoder is given (Whisper's n_fft): the log-mel of fewer samples has no whole frame, so a shorter
 * clip (or a 30 s clip's short tail) is zero-padded to it, and counted as padded.
 */
export const MIN_PIECE_SAMPLES = 400;

/** The ≤ chunkSeconds pieces a clip is encoded in: each piece's sample range, its length as encoded, and its prompt rows. */
export function audioPieces(layout: AudioLayout, samples: number): { start: number; end: number; length: number; tokens: number }[] {
  const chunk = layout.chunkSeconds * layout.sampleRate;
  const out: { start: number; end: number; length: number; tokens: number }[] = [];
  for (let start = 0; start < samples || out.length === 0; start += chunk) {
    const end = Math.min(samples, start + chunk);
    const length = Math.max(end - start, MIN_PIECE_SAMPLES);
    // transformers.js's UltravoxProcessor count (the 1e-4 keeps exact halves rounding up as Python's division does there).
    const frames = Math.round(length / layout.encoderDsFactor + 1e-4);
    out.push({ start, end, length, tokens: 1 + Math.ceil(frames / layout.stackFactor) });
  }
  return out;
}
