// Starts the inference runtime for a registry: tokenizers, the scheduler, and the text, image and embedding worker
// pools wired together.
import { totalmem } from "node:os";
import type { Config } from "../config.ts";
import { prefixCacheSpec, weightBytes } from "../models/prefix-budget.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";
import type { HealthCause } from "../models/failures.ts";
import type { Health, ModelRegistry } from "../models/registry.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { PrefixCacheStats } from "../protocol/text.ts";
import type { SupervisedWorker, WorkerFailure } from "../scheduler/supervisor.ts";
import { embedWorkerUrl, imageWorkerUrl } from "../native/worker-url.ts";
import { EmbedBackend, type EmbedWorkers } from "../scheduler/embed-backend.ts";
import { ImageBackend, type ImageWorkers } from "../scheduler/image-backend.ts";
import { TextBackend, type TextWorkers } from "../scheduler/text-backend.ts";
import { OffThreadEncoder } from "./off-thread-encoder.ts";
import { Tokenizers } from "./tokenizer.ts";
import { Admissions } from "../scheduler/admissions.ts";

export interface Runtime {
  scheduler: Scheduler;
  /** The text backend's worker supervisor (stats, restart). */
  pool: TextWorkers;
  /** The image backend's worker supervisor. */
  imagePool: ImageWorkers;
  /** The embedding backend's worker supervisor. */
  embedPool: EmbedWorkers;
  tokenizers: Tokenizers;
  /** Generation requests being prepared per model; each worker add says how many (a burst waits for its rest). */
  admissions: Admissions;
  stop(): Promise<void>;
}

export async function startRuntime(opts: {
  registry: ModelRegistry;
  config: Pick<Config, "workers" | "threads" | "maxQueue" | "loadTimeoutS"> & Partial<Pick<Config, "smallStepTokens" | "prefixCache" | "prefixCacheMb" | "interactiveReserve">>;
  logger: Logger;
  workerUrl: string | URL;
  /** The image worker's entry (default: workers/image-worker.ts, or its place in the executable). */
  imageWorkerUrl?: string | URL;
  /** The embedding worker's entry (default: workers/embed-worker.ts, or its place in the executable). */
  embedWorkerUrl?: string | URL;
  /** The tokenizer worker's entry; without it every prompt is tokenized on the main thread. */
  tokenizerWorkerUrl?: string | URL;
  hangTimeoutMs?: number;
  spawnWorker?: (url: string | URL) => SupervisedWorker;
  /** A worker was replaced after a crash, hang or failure. */
  onWorkerRestart?: (model: string, failure: WorkerFailure) => void;
  /** A decode pass's rows with and without media (the worker's record of what shared a batch). */
  onDecodeBatch?: (batch: { media: number; text: number }) => void;
  /** A text worker's prefix-cache figures, cumulative since it started (the prefix-cache metrics). */
  onCacheStats?: (workerId: number, model: string, stats: PrefixCacheStats) => void;
}): Promise<Runtime> {
  const { registry, logger } = opts;
  const scheduler = new Scheduler(opts.config.maxQueue, opts.config.interactiveReserve ?? 0);
  const chatModels = registry.list().filter((m) => m.capabilities.chat);
  // What both kinds' worker pools share: how workers start and fail, and who hears of it.
  const pools = {
    workersPerModel: opts.config.workers,
    threads: opts.config.threads,
    logger,
    hangTimeoutMs: opts.hangTimeoutMs,
    loadTimeoutMs: opts.config.loadTimeoutS * 1000,
    spawnWorker: opts.spawnWorker,
    onLost: (ids: string[], failure: WorkerFailure) => scheduler.onWorkerLost(ids, failure),
    onHealth: (model: string, status: Health, cause: HealthCause | null) => registry.setHealth(model, status, cause),
    onReady: () => scheduler.pump(),
    onUnservable: (model: string, failure: WorkerFailure) => scheduler.onUnservable(model, failure),
    onRestart: opts.onWorkerRestart,
  };
  const prefixCache = prefixCacheSpec({
    enabled: opts.config.prefixCache ?? false,
    configuredMb: opts.config.prefixCacheMb,
    totalMemory: totalmem(),
    weightBytes: chatModels.map((m) => weightBytes(m.dir, [m.placement?.dtype ?? m.defaultDtype])),
    workersPerModel: opts.config.workers,
  });
  if (prefixCache) logger.info("prefix cache", { mib_per_worker: Math.round(prefixCache.maxBytes / 2 ** 20), block_tokens: prefixCache.blockTokens });
  const admissions = new Admissions();
  const text = new TextBackend(chatModels, {
    ...pools,
    admissions,
    workerUrl: opts.workerUrl,
    smallStepTokens: opts.config.smallStepTokens,
    prefixCache,
    onStep: (deltas, finished) => scheduler.onStep(deltas, finished),
    onBatch: opts.onDecodeBatch,
    onCacheStats: opts.onCacheStats,
  });
  scheduler.attach(text);
  const images = new ImageBackend(registry.list().filter((m) => m.diffusion), {
    ...pools,
    workerUrl: opts.imageWorkerUrl ?? imageWorkerUrl(),
    onRendered: (id, image) => scheduler.onRendered(id, image),
    onRenderEnded: (id, outcome) => scheduler.onRenderEnded(id, outcome),
  });
  scheduler.attachRenders(images);
  const embeds = new EmbedBackend(registry.list().filter((m) => m.embedding), {
    ...pools,
    workerUrl: opts.embedWorkerUrl ?? embedWorkerUrl(),
    onEnded: (id, outcome) => scheduler.onEmbedEnded(id, outcome),
  });
  scheduler.attachEmbeds(embeds);
  const embedPool = embeds.workers;
  const pool = text.workers;
  const imagePool = images.workers;
  const tokenizers = new Tokenizers({ logger, offThread: opts.tokenizerWorkerUrl ? new OffThreadEncoder(opts.tokenizerWorkerUrl) : undefined });
  const noTokenizer: string[] = [];
  await Promise.all([pool.start(), imagePool.start(), embedPool.start(), ...chatModels.map((m) => tokenizers.get(m).catch(() => noTokenizer.push(m.id)))]);
  // Set after the workers' own reports, so a worker that loaded does not read the model back as operational.
  for (const id of noTokenizer) registry.setHealth(id, "outage", "tokenizer_unavailable");
  return {
    scheduler,
    pool,
    imagePool,
    embedPool,
    tokenizers,
    admissions,
    async stop() {
      scheduler.failAll(ApiError.shuttingDown());
      tokenizers.close();
      await Promise.all([pool.shutdown(), imagePool.shutdown(), embedPool.shutdown()]);
    },
  };
}
