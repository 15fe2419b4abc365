// `kiln serve`: database → first key → default model → registry → worker pool → HTTP; drains on SIGTERM/SIGINT.
import { ensureDefaultModel } from "../../build/model/index.ts";
import { createApp } from "../app.ts";
import type { AppDeps } from "../app-deps.ts";
import type { Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { startRuntime, type Runtime } from "../inference/runtime.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { ModelRegistry, scanModels } from "../models/registry.ts";
import { inferenceWorkerUrl } from "../native/worker-url.ts";
import { ensureFirstKey } from "./first-run.ts";

/** Largest request body accepted: the 1 GiB file limit plus multipart overhead. */
const MAX_BODY = 1024 * 1024 * 1024 + 1024 * 1024;
const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningKiln {
  url: string;
  deps: AppDeps;
  runtime: Runtime;
  /** Stops taking requests, lets running generations finish for up to `graceMs`, fails the rest, closes. */
  stop(graceMs?: number): Promise<void>;
}

export async function startKiln(
  config: Config,
  opts: { logger?: Logger; print?: (text: string) => void; buildDefaultModel?: boolean; spawnWorker?: (url: string | URL) => Worker } = {},
): Promise<RunningKiln> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db = openDatabase(config.dataDir);
  ensureFirstKey(db, opts.print);
  if (opts.buildDefaultModel !== false) await ensureDefaultModel(config.modelsDir);
  const { models, problems } = scanModels(config.modelsDir);
  for (const p of problems) logger.warn("model folder skipped", { folder: p.folder, reason: p.reason });
  const registry = new ModelRegistry(models);
  const runtime = await startRuntime({ registry, config, logger, workerUrl: inferenceWorkerUrl(), spawnWorker: opts.spawnWorker });
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
  const url = server.url.href.replace(/\/$/, "");
  logger.info("listening", { url, models: models.map((m) => m.id) });
  let stopped: Promise<void> | null = null;
  return {
    url,
    deps,
    runtime,
    stop(graceMs = SHUTDOWN_GRACE_MS) {
      stopped ??= (async () => {
        deps.lifecycle.draining = true;
        await Promise.race([server.stop(false), Bun.sleep(graceMs)]);
        await runtime.stop();
        await server.stop(true);
        db.$client.close();
      })();
      return stopped;
    },
  };
}

export async function serve(config: Config): Promise<number> {
  const kiln = await startKiln(config);
  console.log(`kiln listening on ${kiln.url} (API docs at ${kiln.url}/swagger)`);
  return new Promise<number>((resolve) => {
    const onSignal = (signal: string) => {
      kiln.deps.logger.info("shutting down", { signal });
      void kiln.stop().then(() => resolve(0));
    };
    process.on("SIGTERM", () => onSignal("SIGTERM"));
    process.on("SIGINT", () => onSignal("SIGINT"));
  });
}
