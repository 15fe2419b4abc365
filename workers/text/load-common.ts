// What every model folder's loader shares: offline transformers.js setup, ONNX Runtime session options, tensors, and
// the tokenizer side (token bytes, end ids, pad id) derived from the folder.
import { dirname, join } from "node:path";
import { AutoTokenizer, env, Tensor } from "@huggingface/transformers";
import type * as ort from "onnxruntime-node";
import type { MakeTensor, OrtRunner } from "./ort-runner.ts";
import { type TokenizerJson, tokenBytesLookup } from "./token-bytes.ts";

/** A loaded folder: what the worker's engine runs, and its tokenizer side. */
export interface LoadedModel<R = OrtRunner> {
  /** An OrtRunner; a MediaRunner (with `media`) for multimodal folders; a DeviceRunner on the webgpu device. */
  runner: R;
  tokenBytes: (id: number) => Uint8Array;
  /** tokenizer.json as read, for the grammar vocabulary of constrained output. */
  tokenizerJson: TokenizerJson;
  /** The model's end-of-sequence ids (config.json and generation_config.json). */
  eosIds: number[];
  /** Releases the ONNX Runtime sessions. */
  dispose(): Promise<void>;
}

// Tensors must come from the same onnxruntime module the session was made with; transformers.js wraps that one.
export const makeTensor: MakeTensor = (type, data, dims) => new Tensor(type as never, data as never, dims).ort_tensor;

/** Switches transformers.js to the folder's parent, offline (the tokenizer loader ignores local_files_only). */
export function offlineFrom(dir: string): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = dirname(dir);
}

/**
 * What a session runs: passes of any size, or only passes of a few tokens (the small-step session: one-client decode
 * steps, src/models/step-formats.ts), whose ops are too small for a sleeping thread's wake-up to hide.
 */
export type SessionUse = "batch" | "small";

/**
 * ONNX Runtime session options for a worker with `threads` intra-op threads on a `cores`-core machine. Its pool threads
 * spin between ops by default; when they take every core, the spinning starves whatever else must run (the main
 * thread's HTTP and SSE work, other workers, other processes) and a preempted thread holds up every op's barrier:
 * measured at batch 1 on 2 cores under load, a step took 52 ms without spinning against 96 ms with it. So spinning
 * stays on only when a core is left over. `override` (from KILN_ORT_SPINNING) decides instead: "0" off, "1" on, and
 * "small" on for the small-step session inside each run only (force_spinning_stop: its threads sleep as soon as a run
 * ends). On an idle 2-core AVX-512 box "small" took 1 client from 54.2 to 56.1 tok/s over HTTP (a one-client decode
 * step has some 650 small ops, each waiting for a sleeping thread to wake), but with one core busy elsewhere its steps
 * took 32–35 ms against 24 ms without it, so it is not the default; spinning inside runs on the batch session too cost
 * 16 clients 9% (test/load/ab-server.ts).
 */
export function sessionOptions(threads: number, cores: number, override?: string, use: SessionUse = "batch"): Record<string, unknown> {
  const always = override === "1" || (override !== "0" && threads < cores);
  const inRuns = !always && override === "small" && use === "small";
  const session: Record<string, unknown> = { intra_op: { allow_spinning: always || inRuns ? "1" : "0" } };
  if (inRuns) session.force_spinning_stop = "1";
  return { intraOpNumThreads: threads, interOpNumThreads: 1, extra: { session } };
}

/** The session options of a worker given its thread count, on this machine. */
export function workerSessionOptions(threads: number, use: SessionUse = "batch"): Record<string, unknown> {
  return sessionOptions(Math.max(1, Math.floor(threads)), navigator.hardwareConcurrency, process.env.KILN_ORT_SPINNING, use);
}

/** A CPU session's options for a worker given its thread count: ONNX Runtime's warnings off, the worker's threading. */
export function cpuSessionOptions(threads: number, use: SessionUse = "batch"): ort.InferenceSession.SessionOptions {
  return { executionProviders: ["cpu"], logSeverityLevel: 3, ...workerSessionOptions(threads, use) } as ort.InferenceSession.SessionOptions;
}

/** The context a worker holds sequences to: the one the server admits against, else config.json's (2048 without one). */
export function servedContext(spec: { contextLength?: number }, config: { max_position_embeddings?: number }): number {
  return spec.contextLength ?? config.max_position_embeddings ?? 2048;
}

/** The ids config.json gives a tokenizer side: end-of-sequence and padding (either may be absent). */
export interface TokenConfig {
  vocab_size?: number;
  pad_token_id?: number | null;
  eos_token_id?: number | number[] | null;
}

export interface TokenizerSide {
  vocabSize: number;
  padId: number;
  eosIds: number[];
  tokenBytes: (id: number) => Uint8Array;
  tokenizerJson: TokenizerJson;
}

/** Reads the folder's tokenizer and derives the vocabulary size, pad and end ids, and the token→bytes table. */
export async function loadTokenizerSide(dir: string, config: TokenConfig): Promise<TokenizerSide> {
  const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
  const tokenizerJson = (await Bun.file(join(dir, "tokenizer.json")).json()) as TokenizerJson;
  const vocabSize = config.vocab_size ?? tokenizer.get_vocab().size ?? 0;
  if (!(vocabSize > 0)) throw new Error("cannot tell the vocabulary size (config.json has no vocab_size)");
  const eos = Array.isArray(config.eos_token_id) ? config.eos_token_id[0] : config.eos_token_id;
  const eosIds = await endIds(dir, config.eos_token_id, vocabSize);
  const padId = config.pad_token_id ?? tokenizer.pad_token_id ?? eos ?? 0;
  const tokenBytes = tokenBytesLookup(tokenizerJson, (id) => tokenizer.decode([id], { skip_special_tokens: false }));
  return { vocabSize, padId, eosIds, tokenBytes, tokenizerJson };
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
