// `kiln serve`: database → first key → default model → registry → worker pool → HTTP; drains on SIGTERM/SIGINT.
import { mkdirSync } from "node:fs";
import { ensureDefaultModel } from "../modelgen/index.ts";
import { importAtStart } from "../modelgen/import/import-at-start.ts";
import { Gate } from "../access/gate.ts";
import { accessStores } from "../access/stores.ts";
import { LiveResponses } from "../live/live.ts";
import { RedisLiveBus } from "../live/redis-bus.ts";
import { jobRecovery } from "../api/responses/stored.ts";
import { batchRunner } from "../api/batches/runner.ts";
import { startResponseUpkeep } from "../live/upkeep.ts";
import { createApp } from "../app.ts";
import type { AppDeps } from "../app-deps.ts";
import type { Config } from "../config.ts";
import { shareJournal, unshareJournal } from "../billing/journal-index.ts";
import { replaySettlements, settlementsDone } from "../billing/settle.ts";
import { journalPathFor } from "../billing/settlement-journal.ts";
import { closeDatabase, DatabaseOpenError, databasePlace, localDirOf, openConfiguredDatabase } from "../db/client.ts";
import { fileExists } from "../db/files-repo.ts";
import { createFileStorage, storagePlace } from "../files/create-storage.ts";
import { FileStorageError } from "../files/storage.ts";
import { DataDirLockedError, lockDataDir } from "../fs/data-dir-lock.ts";
import { ApiError } from "../errors/api-error.ts";
import { errorResponse } from "../errors/render.ts";
import { newRequestId } from "../http/request-id.ts";
import { createSealer } from "../crypto/sealing.ts";
import { deriveKey, loadServerSecret } from "../crypto/server-secret.ts";
import { PromptTokenizers } from "../images/prompt-tokenizer.ts";
import { chooseDevices, type DeviceProbes, MACHINE_PROBES } from "../devices/choose-devices.ts";
import { DeviceError } from "../devices/device-choice.ts";
import { startRuntime, type Runtime } from "../inference/runtime.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { ModelRegistry, scanModels } from "../models/registry.ts";
import { inferenceWorkerUrl, tokenizerWorkerUrl } from "../native/worker-url.ts";
import { ensureFirstKey, FirstKeyFileError } from "./first-run.ts";
import { ContentPolicyError, loadContentPolicy } from "../media/content-policy.ts";
import type { FetchPolicy, Net } from "../media/fetch-policy.ts";
import { createMediaIntake } from "../media/media-intake.ts";
import { redactUrl } from "../redis/connection.ts";

/**
 * Bun's own cap on a request body: never the one that answers. Past it Bun sends an empty 413 before the key check,
 * so it sits far above every route's limit (the edge and the upload reader enforce those while reading, and a route
 * without a body policy reads nothing).
 */
const BUN_MAX_BODY_BYTES = Number.MAX_SAFE_INTEGER;

/**
 * What a drain may spend after its grace period: failing what is left, letting streams write their last frame,
 * closing connections and workers. The process must be gone within the grace period plus one second.
 */
const AFTER_GRACE_MS = 800;

export interface RunningKiln {
  url: string;
  deps: AppDeps;
  runtime: Runtime;
  /**
   * Drains: the listener stays open, new requests get 503 server_shutting_down, running requests get up to
   * `graceMs` to finish; then what is left is failed and the server closes, at most AFTER_GRACE_MS later.
   */
  stop(graceMs?: number): Promise<void>;
}

interface StartOptions {
  logger?: Logger; print?: (text: string) => void; buildDefaultModel?: boolean; spawnWorker?: (url: string | URL) => Worker;
  /** Tests only: the network remote media come over, and changes to the fetch policy (src/media/media-intake.ts). */
  net?: Net; fetchPolicy?: Partial<FetchPolicy>;
  /** Tests only: what the machine's adapters and webgpu probe say (default: ask the machine). */
  deviceProbes?: DeviceProbes;
}

/** Starts kiln holding its data dir (src/fs/data-dir-lock.ts): a second server on the same dir refuses to start. */
export async function startKiln(config: Config, opts: StartOptions = {}): Promise<RunningKiln> {
  mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  try {
    const kiln = await startHolding(config, opts);
    return { ...kiln, stop: (graceMs) => kiln.stop(graceMs).finally(() => lock.release()) };
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function startHolding(config: Config, opts: StartOptions): Promise<RunningKiln> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  // A content policy the operator set must work before anything starts.
  const policy = loadContentPolicy(config.contentPolicyFile);
  // Postgres (KILN_DATABASE_URL) or SQLite in the data dir; either is migrated here (on Postgres under a lock that makes
  // replicas starting at once apply each migration once).
  const db = await openConfiguredDatabase(config);
  logger.info("database", databasePlace(config));
  const stores = accessStores(config, logger);
  // Replicas sharing a store learn of each other's journaled charges (and of their replay) through it.
  const journal = journalPathFor(localDirOf(db));
  if (journal && stores.journal) shareJournal(journal, stores.journal);
  // Usage the database refused last time (kept in the settlement journal) is written before anything new.
  const replay = await replaySettlements(db, logger);
  if (replay.replayed || replay.alreadyRecorded || replay.kept || replay.unreadable) logger.info("settlement journal replayed", { ...replay });
  await ensureFirstKey(db, opts.print, config.firstKeyFile);
  if (opts.buildDefaultModel !== false) await ensureDefaultModel(config.modelsDir, config.builtinModels);
  await importAtStart(config.modelsDir, config.model, logger);
  const { models, problems } = scanModels(config.modelsDir);
  for (const p of problems) logger.warn("model folder skipped", { folder: p.folder, reason: p.reason });
  // Before any worker starts: an explicit webgpu that cannot work stops here, naming why.
  await chooseDevices(models, config.device, logger, opts.deviceProbes ?? MACHINE_PROBES);
  const registry = new ModelRegistry(models);
  const metrics = new Metrics({ processMetrics: true, teamLabels: config.metricsTeamLabels });
  metrics.settlementsReplayed(replay.replayed);
  const runtime = await startRuntime({
    registry, config, logger, workerUrl: inferenceWorkerUrl(), tokenizerWorkerUrl: tokenizerWorkerUrl(), spawnWorker: opts.spawnWorker,
    onWorkerRestart: (model) => metrics.workerRestarted(model),
    onDecodeBatch: (batch) => metrics.observeDecodeBatch(batch),
    onCacheStats: (workerId, model, stats) => metrics.observePrefixCache(workerId, model, stats),
  });
  metrics.watch({
    queueDepth: () => {
      const waiting = runtime.scheduler.waitingByModel();
      return Object.fromEntries(registry.list().filter((m) => m.capabilities.chat || m.diffusion || m.embedding).map((m) => [m.id, waiting.get(m.id) ?? 0]));
    },
    queueDepthByTier: () => runtime.scheduler.waitingByLane(),
    workers: () => [...runtime.pool.stats(), ...runtime.imagePool.stats(), ...runtime.embedPool.stats()],
    devices: () => registry.list().filter((m) => m.capabilities.chat || m.diffusion || m.embedding).map((m) => ({ model: m.id, device: m.placement?.device ?? "cpu", weights: m.placement?.dtype ?? m.defaultDtype })),
  });
  const files = createFileStorage(config);
  if (stores.redis) {
    // Not fatal: requests that need Redis fail closed (503) until it answers; the rest are served meanwhile.
    const reachable = await stores.redis.time().then(() => true, () => false);
    logger.info("rate limits, billing holds and live responses in redis", { redis: redactUrl(stores.redis.url), reachable });
  }
  // Followers, cancels and ends of responses produced by other replicas reach this one through Redis; alone, none need to.
  const bus = stores.redis ? new RedisLiveBus(stores.redis, { logger }) : null;
  const media = createMediaIntake({ config, db, files, policy, logger, net: opts.net, fetchPolicy: opts.fetchPolicy });
  const secret = loadServerSecret(config.dataDir);
  const drainStarted = new AbortController();
  const deps: AppDeps = {
    config, db, registry, logger, shutdown: { draining: false, drainStarted: drainStarted.signal }, scheduler: runtime.scheduler, tokenizers: runtime.tokenizers, admissions: runtime.admissions,
    promptTokenizers: new PromptTokenizers(logger),
    sealer: createSealer(secret),
    gate: new Gate({ db, config, limiter: stores.limiter, holds: stores.holds }),
    live: new LiveResponses(logger, bus),
    metrics,
    files,
    intake: media.intake,
    ...(stores.redis ? { shared: { redis: stores.redis, flashKey: deriveKey(secret, "dashboard-flash") } } : {}),
  };
  // Uploads a crash cut short (and bytes stored without their row) are removed before the first upload starts.
  // Each file is asked about as the sweep reaches it (keep may be async): in a shared bucket other replicas write rows meanwhile.
  const swept = await deps.files.sweep((id) => fileExists(db, id));
  logger.info("file storage", storagePlace(config));
  if (swept.partial || swept.orphaned) logger.info("file storage swept", { partial: swept.partial, orphaned: swept.orphaned });
  if (swept.unchecked) logger.warn("file storage sweep could not check everything", { unchecked: swept.unchecked });
  if (config.defaultTier && !(await deps.gate.findTier(config.defaultTier))) logger.warn("KILN_DEFAULT_TIER names no tier: teams without one are unlimited", { tier: config.defaultTier });
  const kiln = createApp(deps);
  // Background jobs a crash or shutdown left behind are settled before the first client can ask about them.
  const upkeep = await startResponseUpkeep(deps, jobRecovery(deps));
  // Batches a crash or shutdown left unfinished run on from their lines' states (done lines are not run again).
  const batches = batchRunner(deps);
  const resumed = await batches.start();
  if (resumed) logger.info("batches resumed", { count: resumed });
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // Never Bun's development error page (it shows paths and source); errors outside the app's boundary get the spec's 500.
    development: false,
    fetch: (request, srv) => kiln.handle(request, srv),
    error(e) {
      const requestId = newRequestId();
      logger.error("unhandled exception", { request_id: requestId, error: `${e.name}: ${e.message}`, stack: e.stack });
      return errorResponse(ApiError.internal(), requestId);
    },
    maxRequestBodySize: BUN_MAX_BODY_BYTES,
    // Idle keep-alive connections close; generation requests lift it once their body is in (streams may pause).
    idleTimeout: config.idleTimeoutS,
  });
  const url = server.url.href.replace(/\/$/, "");
  logger.info("listening", { url, models: models.map((m) => m.id) });
  const busy = () => {
    const load = runtime.scheduler.load();
    return kiln.inflight() > 0 || load.active + load.waiting > 0;
  };
  let stopped: Promise<void> | null = null;
  return {
    url,
    deps,
    runtime,
    stop(graceMs = config.shutdownGraceMs) {
      stopped ??= (async () => {
        // Health checks see the replica leaving first, so the load balancer stops sending before anything is refused.
        deps.shutdown.leaving = true;
        if (config.drainNoticeMs > 0) await Bun.sleep(config.drainNoticeMs);
        deps.shutdown.draining = true;
        drainStarted.abort(ApiError.shuttingDown());
        const deadline = performance.now() + graceMs;
        while (busy() && performance.now() < deadline) await Bun.sleep(20);
        logger.info("drained", { unfinished: runtime.scheduler.load(), waited_ms: Math.round(graceMs - Math.max(0, deadline - performance.now())) });
        const left = () => Math.max(0, deadline + AFTER_GRACE_MS - performance.now());
        // Whatever is still running gets its server_shutting_down error (a stream's last frame, a non-streaming 503);
        // workers are asked to stop meanwhile, and the process exit ends any that have not by the end of the budget.
        const workersStopped = runtime.stop();
        upkeep.stop();
        batches.stopTaking();
        // Stored responses write their last state (a background job stays queued or in_progress for recovery); batch
        // lines cut by the drain go back to pending, for the next start or another replica.
        const stored = Promise.all([deps.live.settled(left()), batches.settled(left())]);
        // Let those last answers reach the clients before connections close.
        while ((kiln.openStreams() > 0 || kiln.inflight() > 0) && left() > 0) await Bun.sleep(10);
        await stored;
        // What is left unfinished (a background job cut by the drain) goes to the other replicas now, not once its lease runs out.
        await upkeep.handOver().catch((e) => logger.error("stored response leases not released", { error: String(e) }));
        await batches.handOver().catch((e) => logger.error("batch leases not released", { error: String(e) }));
        await Promise.race([server.stop(false), Bun.sleep(left())]);
        void server.stop(true);
        await Promise.race([Promise.all([workersStopped, media.close()]), Bun.sleep(left())]);
        // Requests that have answered may still be settling (waiting between retries while the database refuses):
        // their usage is written or journaled before the database closes.
        await Promise.race([settlementsDone(db), Bun.sleep(left())]);
        bus?.close();
        if (journal) unshareJournal(journal);
        stores.close();
        await closeDatabase(db);
      })();
      return stopped;
    },
  };
}

export async function serve(config: Config): Promise<number> {
  let kiln: RunningKiln;
  try {
    kiln = await startKiln(config);
  } catch (e) {
    if (!(e instanceof FirstKeyFileError || e instanceof ContentPolicyError || e instanceof DeviceError || e instanceof FileStorageError || e instanceof DatabaseOpenError || e instanceof DataDirLockedError)) throw e;
    console.error(`kiln: ${e.message}`);
    return 2;
  }
  console.log(`kiln listening on ${kiln.url} (API docs at ${kiln.url}/swagger, dashboard at ${kiln.url}/dashboard)`);
  return new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: string) => {
      if (signalled) return;
      signalled = true;
      kiln.deps.logger.info("shutting down", { signal, grace_ms: config.shutdownGraceMs });
      // The drain bounds each of its steps; should one still overrun, the process exits on time anyway.
      setTimeout(() => {
        kiln.deps.logger.warn("shutdown overran its grace period; exiting");
        resolve(0);
      }, config.drainNoticeMs + config.shutdownGraceMs + 950);
      void kiln.stop().then(() => resolve(0));
    };
    process.on("SIGTERM", () => onSignal("SIGTERM"));
    process.on("SIGINT", () => onSignal("SIGINT"));
  });
}
