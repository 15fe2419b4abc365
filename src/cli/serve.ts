// `kiln serve`: database → first key → default model → registry → worker pool → HTTP; drains on SIGTERM/SIGINT.
import { ensureDefaultModel } from "../../build/model/index.ts";
import { Gate } from "../access/gate.ts";
import { LiveResponses } from "../api/responses/live.ts";
import { startResponseUpkeep } from "../api/responses/upkeep.ts";
import { createApp } from "../app.ts";
import { MemoryRateLimiter } from "../ratelimit/limiter.ts";
import type { AppDeps } from "../app-deps.ts";
import type { Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { ApiError } from "../errors/api-error.ts";
import { errorResponse } from "../errors/render.ts";
import { newRequestId } from "../inference/ids.ts";
import { createSealer } from "../crypto/sealing.ts";
import { loadServerSecret } from "../crypto/server-secret.ts";
import { startRuntime, type Runtime } from "../inference/runtime.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { ModelRegistry, scanModels } from "../models/registry.ts";
import { inferenceWorkerUrl, tokenizerWorkerUrl } from "../native/worker-url.ts";
import { ensureFirstKey, FirstKeyFileError } from "./first-run.ts";

/**
 * Bun's own cap on a request body. The edge enforces each route's limit while reading (and a route without a body
 * policy reads nothing), so this only has to be above every route's limit for those to answer in the spec's shape:
 * the 1 GiB file limit plus multipart overhead.
 */
const MAX_BODY = 1024 * 1024 * 1024 + 1024 * 1024;

export interface RunningKiln {
  url: string;
  deps: AppDeps;
  runtime: Runtime;
  /**
   * Drains: the listener stays open, new requests get 503 server_shutting_down, running requests get up to
   * `graceMs` to finish; then what is left is failed and the server closes.
   */
  stop(graceMs?: number): Promise<void>;
}

export async function startKiln(
  config: Config,
  opts: { logger?: Logger; print?: (text: string) => void; buildDefaultModel?: boolean; spawnWorker?: (url: string | URL) => Worker } = {},
): Promise<RunningKiln> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db = openDatabase(config.dataDir);
  ensureFirstKey(db, opts.print, config.firstKeyFile);
  if (opts.buildDefaultModel !== false) await ensureDefaultModel(config.modelsDir);
  const { models, problems } = scanModels(config.modelsDir);
  for (const p of problems) logger.warn("model folder skipped", { folder: p.folder, reason: p.reason });
  const registry = new ModelRegistry(models);
  const runtime = await startRuntime({ registry, config, logger, workerUrl: inferenceWorkerUrl(), tokenizerWorkerUrl: tokenizerWorkerUrl(), spawnWorker: opts.spawnWorker });
  const deps: AppDeps = {
    config, db, registry, logger, lifecycle: { draining: false }, scheduler: runtime.scheduler, tokenizers: runtime.tokenizers,
    sealer: createSealer(loadServerSecret(config.dataDir)),
    gate: new Gate({ db, config, limiter: new MemoryRateLimiter() }),
    live: new LiveResponses(),
  };
  if (config.defaultTier && !deps.gate.findTier(config.defaultTier)) logger.warn("KILN_DEFAULT_TIER names no tier: teams without one are unlimited", { tier: config.defaultTier });
  const kiln = createApp(deps);
  // Background jobs a crash or shutdown left behind are settled before the first client can ask about them.
  const upkeep = await startResponseUpkeep(deps);
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
    maxRequestBodySize: MAX_BODY,
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
        deps.lifecycle.draining = true;
        const deadline = performance.now() + graceMs;
        while (busy() && performance.now() < deadline) await Bun.sleep(20);
        logger.info("drained", { unfinished: runtime.scheduler.load(), waited_ms: Math.round(graceMs - Math.max(0, deadline - performance.now())) });
        // Whatever is still running gets its server_shutting_down error (a stream's last frame), then the listener closes.
        await runtime.stop();
        upkeep.stop();
        // Stored responses write their last state (a background job stays queued or in_progress for recovery).
        await deps.live.settled(1000);
        // Streams now end with their server_shutting_down frame: let it reach the clients before connections close.
        for (const until = performance.now() + 1000; kiln.openStreams() > 0 && performance.now() < until; ) await Bun.sleep(10);
        await Promise.race([server.stop(false), Bun.sleep(1000)]);
        await server.stop(true);
        db.$client.close();
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
    if (!(e instanceof FirstKeyFileError)) throw e;
    console.error(`kiln: ${e.message}`);
    return 2;
  }
  console.log(`kiln listening on ${kiln.url} (API docs at ${kiln.url}/swagger)`);
  return new Promise<number>((resolve) => {
    const onSignal = (signal: string) => {
      kiln.deps.logger.info("shutting down", { signal, grace_ms: config.shutdownGraceMs });
      void kiln.stop().then(() => resolve(0));
    };
    process.on("SIGTERM", () => onSignal("SIGTERM"));
    process.on("SIGINT", () => onSignal("SIGINT"));
  });
}
