// Starts the inference runtime for a registry: tokenizers, the scheduler, and the worker pool wired together.
import type { Config } from "../config.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";
import type { ModelRegistry } from "../models/registry.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { TextBackend, type TextWorkers } from "../scheduler/text-backend.ts";
import { OffThreadEncoder } from "./off-thread-encoder.ts";
import { Tokenizers } from "./tokenizer.ts";

export interface Runtime {
  scheduler: Scheduler;
  /** The text backend's worker supervisor (stats, restart). */
  pool: TextWorkers;
  tokenizers: Tokenizers;
  stop(): Promise<void>;
}

export async function startRuntime(opts: {
  registry: ModelRegistry;
  config: Pick<Config, "workers" | "threads" | "maxQueue" | "loadTimeoutS"> & Partial<Pick<Config, "smallStepTokens">>;
  logger: Logger;
  workerUrl: string | URL;
  /** The tokenizer worker's entry; without it every prompt is tokenized on the main thread. */
  tokenizerWorkerUrl?: string | URL;
  hangTimeoutMs?: number;
  spawnWorker?: (url: string | URL) => Worker;
  /** A worker was replaced after a crash, hang or failure. */
  onWorkerRestart?: (model: string, reason: string) => void;
}): Promise<Runtime> {
  const { registry, logger } = opts;
  const scheduler = new Scheduler(opts.config.maxQueue);
  const chatModels = registry.list().filter((m) => m.capabilities.chat);
  const text = new TextBackend(chatModels, {
    workerUrl: opts.workerUrl,
    workersPerModel: opts.config.workers,
    threads: opts.config.threads,
    smallStepTokens: opts.config.smallStepTokens,
    logger,
    hangTimeoutMs: opts.hangTimeoutMs,
    loadTimeoutMs: opts.config.loadTimeoutS * 1000,
    spawnWorker: opts.spawnWorker,
    onStep: (deltas, finished) => scheduler.onStep(deltas, finished),
    onLost: (ids, reason) => scheduler.onWorkerLost(ids, reason),
    onHealth: (model, status, message) => registry.setHealth(model, status, message),
    onReady: () => scheduler.pump(),
    onUnservable: (model, reason) => scheduler.onUnservable(model, reason),
    onRestart: opts.onWorkerRestart,
  });
  scheduler.attach(text);
  const pool = text.workers;
  const tokenizers = new Tokenizers(opts.tokenizerWorkerUrl ? new OffThreadEncoder(opts.tokenizerWorkerUrl) : undefined);
  await Promise.all([pool.start(), ...chatModels.map((m) => tokenizers.get(m).catch((e) => {
    logger.error("tokenizer failed to load", { model: m.id, reason: String(e) });
    registry.setHealth(m.id, "outage", `tokenizer failed to load: ${(e as Error).message}`);
  }))]);
  return {
    scheduler,
    pool,
    tokenizers,
    async stop() {
      scheduler.failAll(ApiError.shuttingDown());
      tokenizers.close();
      await pool.shutdown();
    },
  };
}
