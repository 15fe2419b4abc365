// Messages between the text backend (main thread) and inference workers: the lifecycle plus add/cancel/step. Plain data only.
import type { SmallStepFormat } from "../models/step-formats.ts";
import type { LifecycleFromWorker, LifecycleToWorker } from "./supervisor.ts";
import type { ServiceTier } from "../inference/service-tier.ts";

/** Per-sequence sampling settings; each sequence in a shared batch keeps its own. */
export interface SamplingParams {
  /** Hard cap on generated tokens for this sequence (0, with promptLogprobs only: the prompt is scored, nothing generated). */
  maxTokens: number;
  /** 0 means greedy (argmax). */
  temperature: number;
  /** Nucleus mass in (0, 1]; 1 disables the filter. */
  topP: number;
  /** Only the k most likely tokens may be sampled (absent: no limit). */
  topK?: number;
  /** Only tokens at least this fraction as likely as the most likely one may be sampled (absent or 0: no limit). */
  minP?: number;
  /** Subtracted from the logit of every token the output already holds (absent: 0). */
  presencePenalty?: number;
  /** Subtracted from a token's logit once per time the output already holds it (absent: 0). */
  frequencyPenalty?: number;
  /** > 1 makes every token of the prompt and the output less likely (absent: 1, none). */
  repetitionPenalty?: number;
  /** [token id, bias] pairs added to the logits at every step; ids as the model's tokenizer numbers them. */
  logitBias?: [number, number][];
  /** Report each generated token's log probability and this many most likely alternatives (0–20); absent: none. */
  logprobs?: number;
  /**
   * Report every prompt token's log probability after the first, with this many alternatives each (0–20): the prompt is
   * then prefilled alone with every position's logits kept, and never read from the prefix cache. Absent: none.
   */
  promptLogprobs?: number;
  /** Seed of this sequence's own PRNG; the same seed and prompt give the same tokens. */
  seed: number;
  /** Text stop sequences: generation ends before the first occurrence, which is not emitted. */
  stop: string[];
  /** Token ids that end the sequence (eos, end-of-turn); not emitted as text. */
  stopTokenIds: number[];
  /** Token ids that are template markup this request gives no meaning to (e.g. `<|im_start|>`): they add no text. */
  silentTokenIds?: number[];
  /** Token ids never sampled (the thinking block's open marker when reasoning is off); tokens the worker writes itself are not affected. */
  bannedTokenIds?: number[];
  /** The sequence starts inside a thinking block that may use at most this many tokens (see ThinkingBudget). */
  thinking?: ThinkingBudget;
  /** The output (or the part of it after thinking) is held to a JSON grammar: structured outputs, forced tool calls. */
  constraint?: OutputConstraint;
  /** At most one tool call in this sequence (parallel_tool_calls: false); see SingleCall. */
  singleCall?: SingleCall;
}

/**
 * At most one tool call per turn, kept by the worker: once a call opened (after `startAfter`, the thinking block's
 * close, when the sequence starts inside one), `openId` is never sampled again, and writing `closeId` ends the sequence (the turn is
 * the call). Either id is absent when its marker is several tokens; the output parser then keeps the first call only.
 */
export interface SingleCall {
  /** The tool-call open marker's id. */
  openId?: number;
  /** The tool-call close marker's id. */
  closeId?: number;
  /** The prompt already opened the call (a forced call's prefix): the output starts inside it. */
  opened?: boolean;
  /** The thinking close marker's id: markers before it are thinking, which opens and closes no call. */
  startAfter?: number;
}

/** What constrained output must be: one instance of a JSON Schema (the strict subset), or any JSON object. */
export type ConstraintSpec = { kind: "json_schema"; schema: Record<string, unknown> } | { kind: "json_object" };

/**
 * Constrained decoding for one sequence. Each step only tokens the grammar allows may be sampled; text stop
 * sequences are not looked for inside the JSON. A max_tokens cut before the JSON is whole ends with "length".
 */
export interface OutputConstraint {
  spec: ConstraintSpec;
  /** Ids that may end the JSON once it is whole (the model's end-of-turn ids); allowed nowhere else. */
  stopIds: number[];
  /**
   * Written by the worker itself when the JSON is whole, in place of the end id the model chose: e.g. `}`,
   * `\n</tool_call>` and end-of-turn after a forced call's arguments. Without it the end id ends the sequence.
   */
  closeIds?: number[];
  /**
   * The constraint starts only once `tokenId` (the thinking close marker) is written and then `framingIds` (what
   * the template writes after it, forced when the model closed the block itself).
   */
  startAfter?: { tokenId: number; framingIds: number[] };
  /**
   * The constraint holds only inside spans the model opens itself: each time it writes `tokenId` (e.g. the
   * tool-call open marker) the worker forces `framingIds`, the JSON is constrained, and `closeIds` end the span;
   * outside spans the output is free. Used for unforced calls of strict tools.
   */
  trigger?: { tokenId: number; framingIds: number[] };
}

/**
 * A thinking budget: once `budget` tokens were spent inside the thinking block without the model closing it
 * (sampling `closeTokenId`), the worker writes `forceIds` (the close marker and its framing) itself, so the answer
 * starts within the budget. Lower reasoning effort, fewer thinking tokens.
 */
export interface ThinkingBudget {
  budget: number;
  closeTokenId: number;
  forceIds: number[];
}

export interface ModelLoadSpec {
  id: string;
  /** Absolute path of the model folder (transformers.js layout). */
  dir: string;
  /** fp32 | q4 | int8 ...: picks onnx/model*.onnx. */
  dtype: string;
  /** Where the decoder runs: ONNX Runtime's CPU EP, or its webgpu EP with the KV cache kept on the GPU (workers/text/device/). */
  device?: "cpu" | "webgpu";
  /** A second format for small forward passes, loaded beside `dtype` (src/models/step-formats.ts). */
  small?: SmallStepFormat;
  /** ONNX Runtime intra-op threads for this worker. */
  threads: number;
  /**
   * The context requests are admitted against (kiln.json's context_length, checked against the graph's bound when the
   * folder was read), so the worker stops a sequence where the server said it would; absent: config.json's.
   */
  contextLength?: number;
  /** Most sequences decoded together in one step. */
  maxBatch: number;
  /**
   * "right-padded": the format's graph attends by GroupQueryAttention (an operator's transformers.js export), so the CPU
   * worker drives it as the webgpu path does (workers/text/device/load-gqa-cpu.ts); absent: kiln's left-padded runner.
   */
  rows?: "right-padded";
  /** The worker's prefix cache (workers/text/prefix-cache.ts); absent: off (KILN_PREFIX_CACHE=0). */
  prefixCache?: PrefixCacheSpec;
}

/** A worker's prefix cache: KV of prompt prefixes kept in blocks of `blockTokens` tokens, within `maxBytes`. */
export interface PrefixCacheSpec {
  maxBytes: number;
  blockTokens: number;
}

/**
 * Who may share a sequence's cached prefix blocks: `scope` is an opaque namespace (one per team, or one for every
 * team when the operator shares across teams). The first `publicTokens` prompt tokens equal an operator-declared public
 * prefix: whole blocks within them are shared by every scope. Absent on an add: the sequence neither reads nor writes
 * the cache.
 */
export interface PrefixScope {
  scope: string;
  publicTokens: number;
}

/**
 * A worker's prefix-cache figures, cumulative since it started (a restarted worker starts from zero again): sent on a
 * step message whenever they changed.
 */
export interface PrefixCacheStats {
  /** Blocks held now, and their bytes. */
  blocks: number;
  bytes: number;
  /** Blocks dropped to stay within the budget. */
  evictions: number;
  /** Prompt tokens of sequences that looked the cache up, and how many of them came from it. */
  promptTokens: number;
  hitTokens: number;
  /** Prompt positions run through prefill passes (padding excluded; a hit's recomputed tail included). */
  prefillTokens: number;
}

/**
 * One image or audio clip of a prompt. `at` is the prompt index of the first of the `tokens` placeholder ids (the
 * expanded run of the model's image or audio token) whose rows the encoder's features replace.
 */
export type MediaInput =
  | { kind: "image"; at: number; tokens: number; image: { bytes: Uint8Array } | { rgb: Uint8Array; width: number; height: number } }
  | { kind: "audio"; at: number; tokens: number; samples: Float32Array; sampleRate: number };

/** The text kind's own requests to a worker (the supervisor adds load, ping and shutdown). */
export type TextToWorker =
  /**
   * `lane` (absent: default): interactive rows go first, background ones (flex, batch) yield rows to them. `incoming`
   * (absent: 0): requests for the model the server was still preparing when it sent this one (an idle worker waits a
   * little for them, so a burst shares one prefill).
   */
  | { type: "add"; seqId: string; promptIds: number[]; params: SamplingParams; media?: MediaInput[]; prefix?: PrefixScope; lane?: ServiceTier; incoming?: number }
  | { type: "cancel"; seqId: string };

export type ToWorker = LifecycleToWorker<ModelLoadSpec> | TextToWorker;

/** How a sequence ended inside the worker; the core maps it onto its own FinishReason (src/inference/blocks.ts). */
export type SeqEndReason = "stop" | "length" | "cancelled" | "error";

export interface SeqDelta {
  seqId: string;
  /** Newly decoded text (may be "" while a multi-byte character or a possible stop sequence is held back). */
  text: string;
  /** Number of tokens generated in this step for the sequence (usually 1). */
  tokens: number;
  /** The step's tokens' log probabilities, when the sequence asked for them (stop tokens are left out). */
  logprobs?: TokenLogprob[];
  /** Prompt tokens' log probabilities, in prompt order, when the sequence asked (the first token's is null). */
  promptLogprobs?: PromptLogprob[];
}

/** A prompt token's entry: the first token has no log probability (nothing precedes it), the others as TokenLogprob. */
export type PromptLogprob = TokenLogprob | { token: number; bytes: number[]; logprob: null; top: null };

/** A generated token's log probability under the model, its UTF-8 bytes, and the most likely alternatives. */
export interface TokenLogprob {
  token: number;
  bytes: number[];
  logprob: number;
  top: { token: number; bytes: number[]; logprob: number }[];
}

export interface SeqFinish {
  seqId: string;
  reason: SeqEndReason;
  promptTokens: number;
  /** Of promptTokens, those whose KV came from the prefix cache (absent: none). */
  cachedTokens?: number;
  outputTokens: number;
  /** Which stop string ended it, when reason is "stop" because of a stop sequence. */
  stopSequence?: string;
  message?: string;
}

/** Rows of a step's decode pass whose sequence carries media / carries none: the engine's record of what shared a batch. */
export interface StepBatch {
  media: number;
  text: number;
}

/** One message per engine step: every active sequence's delta, plus the sequences that ended (and, after a decode pass, its rows). */
export type TextFromWorker = { type: "step"; deltas: SeqDelta[]; finished: SeqFinish[]; batch?: StepBatch; cache?: PrefixCacheStats };

export type FromWorker = LifecycleFromWorker | TextFromWorker;
