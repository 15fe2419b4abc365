// The one thing the engine needs from a model: a forward pass over a batch with its KV cache.
import type { MediaInput } from "../../src/protocol/text.ts";
import type { StepInputs } from "./batch-inputs.ts";
import type { Arranged, BatchKv, BatchRow, KvData, KvTensor } from "./kv-cache.ts";

export interface ForwardResult<T = KvTensor> {
  /** [batch, vocab] float32: logits at each row's last position. */
  logits: Float32Array;
  vocab: number;
  /** [seqLen, vocab] float32: every position's logits of a one-row pass whose inputs asked (StepInputs.allLogits). */
  positions?: Float32Array;
  /**
   * Every layer's present key/value (same order as BatchKv.tensors), holding at least `past + seqLen` columns: the new
   * ones follow the past's used columns. A runner that keeps the cache in place writes them into the past's own spare
   * columns and may return the past's tensors themselves, so a past must not be forwarded twice (the second pass
   * would overwrite the first one's columns).
   */
  present: T[];
}

/** How a runner's caches are joined, left and reordered between steps (a device runner does it on the device). */
export interface CacheOps<T> {
  /**
   * The next batch from `rows` (joins, leaves and reorders). Batches not named in `rows` or in `retained` (a long
   * prompt's cache between its chunks) are dead afterwards: a runner that owns device memory frees them.
   */
  arrange(rows: BatchRow<T>[], retained: BatchKv<T>[]): Promise<Arranged<T>>;
}

export interface ModelRunner<T = KvTensor> {
  /** Token ids accepted in prompts. */
  readonly vocabSize: number;
  /** Most tokens (prompt + generated) one sequence may hold. */
  readonly maxContext: number;
  /** Id written into left padding of a batched prefill (masked, so any valid id works). */
  readonly padId: number;
  /** Whether a past may carry spare columns past its used length (the runner writes new columns into them in place). */
  readonly spareColumns?: boolean;
  /** Whether a pass can keep every position's logits (StepInputs.allLogits); absent: the last position's only. */
  readonly allPositions?: boolean;
  /** Whether a pass over a past takes one row only: a sequence with a cached prefix is then prefilled alone. */
  readonly oneRowPast?: boolean;
  /**
   * For a runner that prefills in passes of at most this many tokens from position 0: cached prefixes are cut to a
   * multiple of it, so a hit's passes fall where a fresh prefill's do (a repeat is then bit-identical even on kernels
   * that change with a pass's size).
   */
  readonly passAlign?: number;
  /**
   * For a cache the host cannot read in place (a device's): a row's positions [from, from + n) copied to the host,
   * each tensor's [heads, n, headDim]. Such a runner's forward also takes a host past (the prefix cache's blocks).
   */
  readColumns?(kv: BatchKv<T>, row: number, from: number, n: number): Promise<KvData[]>;
  /** Runs one step; `past` is null for a prefill from an empty cache. */
  forward(inputs: StepInputs, past: BatchKv<T> | null): Promise<ForwardResult<T>>;
  /** Cache arrangement; host caches (KvTensor) are arranged by arrangeHost when absent. */
  readonly cache?: CacheOps<T>;
  /** Bytes moved between host and device so far (device runners only). */
  readonly transfer?: { toDevice: number; toHost: number };
  /** Present when the model takes image or audio input: its preprocessing and encoders. */
  readonly media?: MediaEncoders;
}

export type MediaKind = MediaInput["kind"];

/** A media input turned into its encoder's input tensor (pixel values or log-mel features). */
export interface PreparedMedia {
  data: Float32Array;
  dims: number[];
}

/** A model's media side: preprocessing (off the step, when an add arrives) and the encoders (at prefill). */
export interface MediaEncoders {
  /** The placeholder token id of each kind the model takes. */
  readonly tokenIds: Partial<Record<MediaKind, number>>;
  /** Width of a feature row: the decoder's hidden size. */
  readonly hidden: number;
  /** Preprocesses one input; throws MediaInputError for input the model cannot take. */
  prepare(input: MediaInput): Promise<PreparedMedia>;
  /** Runs the kind's encoder over one prepared input: its feature rows, n × hidden. */
  encode(kind: MediaKind, prepared: PreparedMedia): Promise<Float32Array>;
}

/** A media input the model cannot take; its message is short and safe to show. */
export class MediaInputError extends Error {}
