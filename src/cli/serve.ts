// `kiln serve`: database → first key → default model → registry → worker pool → HTTP; drains on SIGTERM/SIGINT.
import { ensureDefaultModel } from "../../build/model/index.ts";
import { createApp } from "../app.ts";
import type { AppDeps } from "../app-deps.ts";
import type { Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { createLogger } from "../log/logger.ts";
import { startRuntime } from "../inference/runtime.ts";
import { ModelRegistry, scanModels } from "../models/registry.ts";
import { inferenceWorkerUrl } from "../native/worker-url.ts";
import { ensureFirstKey } from "./first-run.ts";

/** Largest request body accepted: the 1 GiB file limit plus multipart overhead. */
const MAX_BODY = 1024 * 1024 * 1024 + 1024 * 1024;
const SHUTDOWN_GRACE_MS = 10_000;

export async function serve(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel);
  const db = openDatabase(config.dataDir);
  ensureFirstKey(db);
  await ensureDefaultModel(config.modelsDir);
  const { models, problems } = scanModels(config.modelsDir);
  for (const p of problems) logger.warn("model folder skipped", { folder: p.folder, reason: p.reason });
  const registry = new ModelRegistry(models);
  const runtime = await startRuntime({ registry, config, logger, workerUrl: inferenceWorkerUrl() });
  const deps: AppDeps = {
    config, db, registry, logger, lifecycle: { draining: false }, scheduler: runtime.scheduler, tokenizers: runtime.tokenizers,
  };
  const kiln = createApp(deps);
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    fetch: kiln.handle,
    maxRequestBodySize: MAX_BODY,
    // Streams can pause between tokens and non-streaming requests run up to the time limit.
    idleTimeout: 0,
  });
  logger.info("listening", { url: server.url.href, models: models.map((m) => m.id) });
  console.log(`kiln listening on ${server.url.href.replace(/\/$/, "")} (API docs at /swagger)`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      deps.lifecycle.draining = true;
      logger.info("shutting down", { signal });
      // Let running generations finish for a while, then fail the rest as retryable and close.
      await Promise.race([server.stop(false), Bun.sleep(SHUTDOWN_GRACE_MS)]);
      await runtime.stop();
      await server.stop(true);
      db.$client.close();
      resolve(0);
    };
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGINT", () => void stop("SIGINT"));
  });
}
