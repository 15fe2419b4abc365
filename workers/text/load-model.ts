// Loads a model folder offline and exposes its ONNX sessions as a ModelRunner plus a token→bytes table: text folders
// through transformers.js, multimodal ones (decoder_model_merged + encoders) through load-media-model.ts.
import { AutoModelForCausalLM } from "@huggingface/transformers";
import type { ModelLoadSpec } from "../../src/protocol/text.ts";
import { type LoadedModel, loadTokenizerSide, makeTensor, offlineFrom, servedContext, workerSessionOptions } from "./load-common.ts";
import { isMediaFolder, loadMediaModel } from "./load-media-model.ts";
import { type ModelConfig, OrtRunner, type OrtSessionLike } from "./ort-runner.ts";

export { type LoadedModel, sessionOptions } from "./load-common.ts";

export async function loadModel(spec: ModelLoadSpec): Promise<LoadedModel> {
  offlineFrom(spec.dir);
  if (isMediaFolder(spec.dir, spec.dtype)) return loadMediaModel(spec);
  const load = (dtype: string) =>
    AutoModelForCausalLM.from_pretrained(spec.dir, {
      local_files_only: true,
      device: "cpu",
      dtype: dtype as never,
      session_options: workerSessionOptions(spec.threads),
    });
  const model = await load(spec.dtype);
  let smallModel: Awaited<ReturnType<typeof load>> | null = null;
  const dispose = async () => void (await Promise.all([model.dispose(), smallModel?.dispose()]));
  try {
    smallModel = spec.small ? await load(spec.small.dtype) : null;
    const session = decoderSession(model);
    const read = model.config as unknown as ModelConfig;
    const config: ModelConfig = { ...read, max_position_embeddings: servedContext(spec, read) };
    const { vocabSize, padId, eosIds, tokenBytes, tokenizerJson } = await loadTokenizerSide(spec.dir, model.config as never);
    const small = smallModel && spec.small ? { session: decoderSession(smallModel), format: spec.small } : undefined;
    const runner = new OrtRunner(session, config, makeTensor, vocabSize, padId, small);
    return { runner, tokenBytes, tokenizerJson, eosIds, dispose };
  } catch (e) {
    // Both sessions go with a failed load, whichever step failed.
    await dispose();
    throw e;
  }
}

function decoderSession(model: unknown): OrtSessionLike {
  const session = (model as { sessions: Record<string, OrtSessionLike | undefined> }).sessions.model;
  if (!session) throw new Error("the model has no decoder session");
  return session;
}
