// Loads a model folder offline through transformers.js and exposes its ONNX session as a ModelRunner plus a token→bytes table.
import { dirname, join } from "node:path";
import { AutoModelForCausalLM, AutoTokenizer, env, Tensor } from "@huggingface/transformers";
import type { ModelLoadSpec } from "../../src/scheduler/protocol.ts";
import { type MakeTensor, type ModelConfig, OrtRunner, type OrtSessionLike } from "./ort-runner.ts";
import { type TokenizerJson, tokenBytesLookup } from "./token-bytes.ts";

export interface LoadedModel {
  runner: OrtRunner;
  tokenBytes: (id: number) => Uint8Array;
  /** tokenizer.json as read, for the grammar vocabulary of constrained output. */
  tokenizerJson: TokenizerJson;
  /** The model's end-of-sequence ids (config.json and generation_config.json). */
  eosIds: number[];
  /** Releases the ONNX Runtime sessions. */
  dispose(): Promise<void>;
}

interface LoadedConfig extends ModelConfig {
  vocab_size?: number;
  pad_token_id?: number | null;
  eos_token_id?: number | number[] | null;
}

// Tensors must come from the same onnxruntime module the session was made with; transformers.js wraps that one.
const makeTensor: MakeTensor = (type, data, dims) => new Tensor(type as never, data as never, dims).ort_tensor;

export async function loadModel(spec: ModelLoadSpec): Promise<LoadedModel> {
  // No hub: the tokenizer loader ignores local_files_only, so remote loading is switched off globally.
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = dirname(spec.dir);
  const threads = Math.max(1, Math.floor(spec.threads));
  const tokenizer = await AutoTokenizer.from_pretrained(spec.dir, { local_files_only: true });
  const load = (dtype: string) =>
    AutoModelForCausalLM.from_pretrained(spec.dir, {
      local_files_only: true,
      device: "cpu",
      dtype: dtype as never,
      session_options: sessionOptions(threads, navigator.hardwareConcurrency, process.env.KILN_ORT_SPINNING),
    });
  const model = await load(spec.dtype);
  let smallModel: Awaited<ReturnType<typeof load>> | null = null;
  const dispose = async () => void (await Promise.all([model.dispose(), smallModel?.dispose()]));
  try {
    smallModel = spec.small ? await load(spec.small.dtype) : null;
    const session = decoderSession(model);
    const config = model.config as unknown as LoadedConfig;
    const tokenizerJson = (await Bun.file(join(spec.dir, "tokenizer.json")).json()) as TokenizerJson;
    const vocabSize = config.vocab_size ?? tokenizer.get_vocab().size ?? 0;
    if (!(vocabSize > 0)) throw new Error("cannot tell the vocabulary size (config.json has no vocab_size)");
    const eos = Array.isArray(config.eos_token_id) ? config.eos_token_id[0] : config.eos_token_id;
    const eosIds = await endIds(spec.dir, config.eos_token_id, vocabSize);
    const padId = config.pad_token_id ?? tokenizer.pad_token_id ?? eos ?? 0;
    const small = smallModel && spec.small ? { session: decoderSession(smallModel), format: spec.small } : undefined;
    const runner = new OrtRunner(session, config, makeTensor, vocabSize, padId, small);
    const tokenBytes = tokenBytesLookup(tokenizerJson, (id) => tokenizer.decode([id], { skip_special_tokens: false }));
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

/**
 * ONNX Runtime session options for a worker with `threads` intra-op threads on a `cores`-core machine. Its pool threads
 * spin between ops by default; when they take every core, the spinning starves whatever else must run (the main
 * thread's HTTP and SSE work, other workers, other processes) and a preempted thread holds up every op's barrier:
 * measured at batch 1 on 2 cores under load, a step took 52 ms without spinning against 96 ms with it. Spinning stays
 * on when a core is left over. `override` ("0"/"1", from KILN_ORT_SPINNING) decides instead, for A/B runs.
 */
export function sessionOptions(threads: number, cores: number, override?: string): Record<string, unknown> {
  const spin = override === "1" || (override !== "0" && threads < cores);
  return { intraOpNumThreads: threads, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: spin ? "1" : "0" } } } };
}

/** Every end-of-sequence id config.json and generation_config.json name, within the vocabulary. */
async function endIds(dir: string, fromConfig: number | number[] | null | undefined, vocabSize: number): Promise<number[]> {
  const ids = new Set<number>();
  const add = (v: unknown) => {
    for (const id of Array.isArray(v) ? v : [v]) if (Number.isInteger(id) && id >= 0 && id < vocabSize) ids.add(id as number);
  };
  add(fromConfig);
  const gen = Bun.file(join(dir, "generation_config.json"));
  // generation_config.json is optional.
  if (await gen.exists()) add(((await gen.json()) as { eos_token_id?: unknown }).eos_token_id);
  return [...ids];
}
