// Builds a kiln app over a fresh temp data dir for tests that go through app.handle (no socket).
import { createSealer } from "../../src/crypto/sealing.ts";
import { loadServerSecret } from "../../src/crypto/server-secret.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Gate } from "../../src/access/gate.ts";
import { accessStores } from "../../src/access/stores.ts";
import { LiveResponses } from "../../src/live/live.ts";
import { RedisLiveBus } from "../../src/live/redis-bus.ts";
import { createApp, type Kiln } from "../../src/app.ts";
import type { AppDeps } from "../../src/app-deps.ts";
import { loadConfig } from "../../src/config.ts";
import { openConfiguredDatabase } from "../../src/db/client.ts";
import { createFileStorage } from "../../src/files/create-storage.ts";
import { EMPTY_POLICY } from "../../src/media/content-policy.ts";
import { createMediaIntake } from "../../src/media/media-intake.ts";
import { loopbackNet } from "./loopback-net.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { PromptTokenizers } from "../../src/images/prompt-tokenizer.ts";
import { Tokenizers } from "../../src/inference/tokenizer.ts";
import { ModelRegistry, scanModels } from "../../src/models/registry.ts";
import { Scheduler } from "../../src/scheduler/scheduler.ts";
import type { Runtime } from "../../src/inference/runtime.ts";

export interface TestKiln extends Kiln {
  deps: AppDeps;
  logs: Record<string, unknown>[];
  key: string;
  keyId: number;
  teamId: number;
  url(path: string): string;
  req(path: string, init?: RequestInit & { json?: unknown; key?: string | null }): Promise<Response>;
}

const made: string[] = [];

/** Removes every directory tempDir made (test/setup.ts calls it once the whole run is over). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh directory under the system temp dir, removed after the test run. */
export function tempDir(prefix = "kiln-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A kiln app over a temp data dir. Without a runtime, generation routes answer 503 backend_unavailable. */
export async function testKiln(opts: { modelsDir?: string; env?: Record<string, string>; runtime?: Runtime; registry?: ModelRegistry } = {}): Promise<TestKiln> {
  const dataDir = tempDir();
  const config = loadConfig({ KILN_DATA_DIR: dataDir, ...(opts.modelsDir ? { KILN_MODELS_DIR: opts.modelsDir } : {}), ...opts.env }, []);
  // KILN_DATABASE_URL in `env` puts the data in that Postgres, as in serve.
  const db = await openConfiguredDatabase(config);
  const team = await createTeam(db, "test-team");
  const created = await createKey(db, team.id, "test key");
  const logger = memoryLogger();
  const registry = opts.registry ?? new ModelRegistry(scanModels(config.modelsDir).models);
  const files = createFileStorage(config);
  const stores = accessStores(config, logger);
  const deps: AppDeps = {
    config, db, registry, logger, shutdown: { draining: false },
    scheduler: opts.runtime?.scheduler ?? new Scheduler(config.maxQueue),
    tokenizers: opts.runtime?.tokenizers ?? new Tokenizers(),
    promptTokenizers: new PromptTokenizers(logger),
    sealer: createSealer(loadServerSecret(config.dataDir)),
    metrics: new Metrics({ teamLabels: config.metricsTeamLabels }),
    // KILN_REDIS_URL in `env` puts the limits and holds in that Redis, as in serve.
    gate: new Gate({ db, config, limiter: stores.limiter, holds: stores.holds }),
    // With KILN_REDIS_URL, responses produced elsewhere are followed and cancelled through Redis, as in serve.
    live: new LiveResponses(logger, stores.redis && new RedisLiveBus(stores.redis, { logger })),
    files,
    // A guarded net: no test through this app can reach beyond loopback, whatever URL a request names.
    intake: createMediaIntake({ config, db, files, policy: EMPTY_POLICY, net: loopbackNet() }).intake,
  };
  const kiln = createApp(deps);
  const url = (path: string) => `http://kiln.test${path}`;
  return {
    ...kiln,
    deps,
    logs: logger.lines,
    key: created.key,
    keyId: created.id,
    teamId: team.id,
    url,
    req(path, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? created.key : init.key;
      if (key !== null && !headers.has("authorization") && !headers.has("x-api-key")) headers.set("authorization", `Bearer ${key}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("content-type", "application/json");
        body = JSON.stringify(init.json);
      }
      return kiln.handle(new Request(url(path), { ...init, headers, body }));
    },
  };
}
