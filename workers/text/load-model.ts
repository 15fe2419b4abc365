// Loads a model folder offline and exposes its ONNX sessions as a ModelRunner plus a token→bytes table: text folders
// through transformers.js, multimodal ones (decoder_model_merged + encoders) through load-media-model.ts.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AutoModelForCausalLM } from "@huggingface/transformers";
import * as ort from "onnxruntime-node";
import { stepGraphFile } from "../../src/models/manifest.ts";
import type { ModelLoadSpec } from "../../src/protocol/text.ts";
import { cpuSessionOptions, type LoadedModel, loadTokenizerSide, makeTensor, offlineFrom, servedContext, type SessionUse, workerSessionOptions } from "./load-common.ts";
import { isMediaFolder, loadMediaModel } from "./load-media-model.ts";
import { type ModelConfig, OrtRunner, type OrtSessionLike } from "./ort-runner.ts";

export { type LoadedModel, sessionOptions } from "./load-common.ts";

export async function loadModel(spec: ModelLoadSpec): Promise<LoadedModel> {
  offlineFrom(spec.dir);
  if (isMediaFolder(spec.dir, spec.dtype)) return loadMediaModel(spec);
  const load = (dtype: string, use: SessionUse = "batch") =>
    AutoModelForCausalLM.from_pretrained(spec.dir, {
      local_files_only: true,
      device: "cpu",
      dtype: dtype as never,
      session_options: workerSessionOptions(spec.threads, use),
    });
  const model = await load(spec.dtype);
  let smallModel: { session: OrtSessionLike; dispose(): Promise<unknown> } | null = null;
  const dispose = async () => void (await Promise.all([model.dispose(), smallModel?.dispose()]));
  try {
    if (spec.small) smallModel = await loadSmall(spec, spec.small.dtype, () => load(spec.small!.dtype, "small"));
    const session = decoderSession(model);
    const read = model.config as unknown as ModelConfig;
    const config: ModelConfig = { ...read, max_position_embeddings: servedContext(spec, read) };
    const { vocabSize, padId, eosIds, tokenBytes, tokenizerJson } = await loadTokenizerSide(spec.dir, model.config as never);
    const small = smallModel && spec.small ? { session: smallModel.session, format: spec.small } : undefined;
    const runner = new OrtRunner(session, config, makeTensor, vocabSize, padId, small);
    return { runner, tokenBytes, tokenizerJson, eosIds, dispose };
  } catch (e) {
    // Both sessions go with a failed load, whichever step failed.
    await dispose();
    throw e;
  }
}

/**
 * The small-step session: the folder's one-token graph in that format when it has one (kiln's builds since builder 13:
 * the same weights, attention without the cache's copy), else the format's main graph through transformers.js.
 */
async function loadSmall(spec: ModelLoadSpec, dtype: string, viaTransformers: () => Promise<{ dispose(): Promise<unknown> }>) {
  const stepFile = join(spec.dir, "onnx", stepGraphFile(dtype));
  if (existsSync(stepFile)) {
    const session = await ort.InferenceSession.create(stepFile, cpuSessionOptions(spec.threads, "small"));
    return { session: session as unknown as OrtSessionLike, dispose: () => session.release() };
  }
  const model = await viaTransformers();
  return { session: decoderSession(model), dispose: () => model.dispose() };
}

function decoderSession(model: unknown): OrtSessionLike {
  const session = (model as { sessions: Record<string, OrtSessionLike | undefined> }).sessions.model;
  if (!session) throw new Error("the model has no decoder session");
  return session;
}
