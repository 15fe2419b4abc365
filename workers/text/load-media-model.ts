// Loads a multimodal folder (transformers.js's layout: embed_tokens, decoder_model_merged, vision and/or audio encoder)
// into a MediaRunner: llava (vision), ultravox (audio) and kiln_omni (both), told apart by config.json's model_type.
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { dtypeSuffix, onnxFileForDtype } from "../../src/models/manifest.ts";
import type { ModelLoadSpec } from "../../src/protocol/text.ts";
import { cpuSessionOptions, type LoadedModel, loadTokenizerSide, makeTensor, servedContext } from "./load-common.ts";
import { WORKER_ENTRIES, workerEntryUrl } from "../../src/native/worker-url.ts";
import { type PrepThread, RemotePreprocessor } from "./remote-preprocess.ts";
import { ENCODER_NAMES, type EncoderSession, MediaRunner } from "./media-runner.ts";
import type { MediaKind } from "./model-runner.ts";
import type { ModelConfig, OrtSessionLike } from "./ort-runner.ts";

const KINDS: Record<string, MediaKind[]> = { llava: ["image"], ultravox: ["audio"], kiln_omni: ["image", "audio"] };

type TextConfig = ModelConfig & { vocab_size?: number; pad_token_id?: number | null; eos_token_id?: number | number[] | null };

/** What a multimodal folder's config.json says the worker needs: its media kinds, their token ids, the decoder's config. */
export interface MediaModelConfig {
  kinds: MediaKind[];
  tokenIds: Partial<Record<MediaKind, number>>;
  /** The decoder's config (its KV layout, context and vocabulary), with the top level's end and pad ids. */
  text: TextConfig;
  hidden: number;
}

/** Reads a multimodal config.json; throws naming what is missing or not served. */
export function mediaModelConfig(config: Record<string, unknown>): MediaModelConfig {
  const type = String(config.model_type);
  const kinds = KINDS[type];
  if (!kinds) throw new Error(`multimodal model_type "${type}" is not served (kiln runs ${Object.keys(KINDS).join(", ")})`);
  const text = config.text_config as TextConfig | undefined;
  if (!text || typeof text !== "object") throw new Error("config.json has no text_config");
  const hidden = text.hidden_size;
  if (!Number.isInteger(hidden) || hidden! <= 0) throw new Error("text_config has no hidden_size");
  const tokenIds: Partial<Record<MediaKind, number>> = {};
  for (const kind of kinds) {
    const id = kind === "image" ? (config.image_token_index ?? config.image_token_id) : (config.audio_token_index ?? config.audio_token_id);
    if (!Number.isInteger(id)) throw new Error(`config.json has no ${kind}_token_index`);
    tokenIds[kind] = id as number;
  }
  const top = config as TextConfig;
  const merged: TextConfig = {
    ...text,
    vocab_size: text.vocab_size ?? top.vocab_size,
    eos_token_id: top.eos_token_id ?? text.eos_token_id,
    pad_token_id: top.pad_token_id ?? text.pad_token_id,
  };
  return { kinds, tokenIds, text: merged, hidden: hidden! };
}

/** Whether the folder is a multimodal layout: it has a decoder_model_merged graph (fp32 or the dtype's). */
export function isMediaFolder(dir: string, dtype: string): boolean {
  const own = onnxFileForDtype(dtype, "decoder_model_merged");
  return existsSync(join(dir, "onnx", "decoder_model_merged.onnx")) || (own !== undefined && existsSync(join(dir, "onnx", own)));
}

/** Embeddings, pixels and log-mel go in as float32: a float16 graph would fail every pass, so it is refused at load. */
export function requireFloat32(session: OrtSessionLike, input: string, graph: string): void {
  const type = session.inputMetadata?.find((m) => m.name === input)?.type;
  if (type !== undefined && type !== "float32") throw new Error(`${graph}'s ${input} is ${type}; kiln runs multimodal graphs that take float32 (use the folder's fp32 or q4 files)`);
}

export async function loadMediaModel(spec: ModelLoadSpec): Promise<LoadedModel> {
  const media = mediaModelConfig(await Bun.file(join(spec.dir, "config.json")).json());
  const suffix = dtypeSuffix(spec.dtype);
  const options = cpuSessionOptions(spec.threads);
  const sessions: ort.InferenceSession[] = [];
  let preprocessor: RemotePreprocessor | null = null;
  const dispose = async () => {
    preprocessor?.dispose();
    await Promise.all(sessions.map((s) => s.release()));
  };
  /** The graph in the requested dtype; `fallback`: in fp32 when the folder has no such file. */
  const open = async (name: string, fallback: boolean): Promise<OrtSessionLike> => {
    let path = join(spec.dir, "onnx", `${name}${suffix}.onnx`);
    if (fallback && !existsSync(path)) path = join(spec.dir, "onnx", `${name}.onnx`);
    if (!existsSync(path)) throw new Error(`the folder has no onnx/${name}${suffix}.onnx`);
    const session = await ort.InferenceSession.create(path, options);
    sessions.push(session);
    return session as unknown as OrtSessionLike;
  };
  try {
    const decoder = await open("decoder_model_merged", false);
    const embed = await open("embed_tokens", true);
    const encoders: Partial<Record<MediaKind, EncoderSession>> = {};
    for (const kind of media.kinds) {
      const names = ENCODER_NAMES[kind];
      encoders[kind] = { session: await open(names.file, true), input: names.input, output: names.output };
    }
    requireFloat32(decoder, "inputs_embeds", "decoder_model_merged");
    for (const [kind, e] of Object.entries(encoders)) requireFloat32(e.session, e.input, ENCODER_NAMES[kind as MediaKind].file);
    // Preprocessing (image resizing, Whisper log-mel) runs on a thread of its own, beside this worker's steps.
    const spawn = () => new Worker(workerEntryUrl(WORKER_ENTRIES.mediaPrep)) as unknown as PrepThread;
    preprocessor = await RemotePreprocessor.start(spawn, spec.dir, { image: media.kinds.includes("image"), audio: media.kinds.includes("audio") });
    const side = await loadTokenizerSide(spec.dir, media.text);
    const runner = new MediaRunner(decoder, { ...media.text, max_position_embeddings: servedContext(spec, media.text) }, makeTensor, side.vocabSize, side.padId, {
      embed,
      encoders,
      preprocessor,
      tokenIds: media.tokenIds,
      hidden: media.hidden,
    });
    return { runner, tokenBytes: side.tokenBytes, tokenizerJson: side.tokenizerJson, eosIds: side.eosIds, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}
