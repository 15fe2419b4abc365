// Messages between the embedding backend (main thread) and embedding workers: the lifecycle plus embed/cancel/result.
// One job is one request's inputs, already tokenized; the worker batches the rows of every job it holds into shared
// ONNX runs and answers each job once, its vectors flattened into one transferable buffer.
import type { PoolingMode } from "../models/embedding-layout.ts";
import type { LifecycleFromWorker, LifecycleToWorker } from "./supervisor.ts";

export type { PoolingMode };

export interface EmbedLoadSpec {
  id: string;
  /** Absolute path of the sentence-transformers folder. */
  dir: string;
  /** The graph file under onnx/ (model.onnx for fp32) and its dtype. */
  graph: string;
  dtype: string;
  /** ONNX Runtime intra-op threads for this worker. */
  threads: number;
  pooling: PoolingMode;
  normalize: boolean;
  /** The vector's size (the graph's hidden size): a load whose graph says otherwise fails. */
  dimensions: number;
  /** Most padded tokens (rows × longest row) one run takes: rows past it wait for the next run. */
  maxBatchTokens: number;
}

/** The main thread's own requests to an embedding worker (the supervisor adds load, ping and shutdown). */
export type EmbedToWorker = { type: "embed"; jobId: string; inputs: number[][] } | { type: "cancel"; jobId: string };

export type EmbedWorkerIn = LifecycleToWorker<EmbedLoadSpec> | EmbedToWorker;

/**
 * How a job ended: `vectors` holds inputs.length × dimensions floats, input by input; `message` (a failure) is for the
 * log only, never for a client.
 */
export type EmbedFromWorker =
  | { type: "embedded"; jobId: string; vectors: Float32Array; dimensions: number }
  | { type: "embed_failed"; jobId: string; message: string }
  | { type: "embed_cancelled"; jobId: string };

export type EmbedWorkerOut = LifecycleFromWorker | EmbedFromWorker;
