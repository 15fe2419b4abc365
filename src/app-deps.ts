// What the HTTP layer needs from the rest of kiln; tests build it with a temp data dir.
import type { Gate } from "./access/gate.ts";
import type { LiveResponses } from "./live/live.ts";
import type { Config } from "./config.ts";
import type { Sealer } from "./crypto/sealing.ts";
import type { Db } from "./db/client.ts";
import type { FileStorage } from "./files/storage.ts";
import type { CoreIntake } from "./inference/core-deps.ts";
import type { Logger } from "./log/logger.ts";
import type { Metrics } from "./metrics/metrics.ts";
import type { ModelRegistry } from "./models/registry.ts";
import type { Scheduler } from "./scheduler/scheduler.ts";
import type { PromptTokenizers } from "./images/prompt-tokenizer.ts";
import type { RedisConnection } from "./redis/connection.ts";
import type { Tokenizers } from "./inference/tokenizer.ts";
import type { Admissions } from "./scheduler/admissions.ts";

/** Where the server is in shutting down, which every request checks: leaving (the drain notice), then draining. */
export interface ShutdownState {
  /** True once shutdown began: new generation requests get 503 server_shutting_down. */
  draining: boolean;
  /** True from SIGTERM on, before `draining` (during the drain notice): /v1/status says is_alive false, requests are still served. */
  leaving?: boolean;
  /**
   * Aborted (with 503 server_shutting_down) when the drain begins: an upload whose body still arrives cannot be
   * counted on to end within the grace period, so it stops at once and leaves nothing (the client retries it).
   */
  drainStarted?: AbortSignal;
}

export interface AppDeps {
  config: Config;
  db: Db;
  registry: ModelRegistry;
  logger: Logger;
  shutdown: ShutdownState;
  scheduler: Scheduler;
  tokenizers: Tokenizers;
  /** Generation requests being prepared per model (src/scheduler/admissions.ts); absent in tests that build no runtime. */
  admissions?: Admissions;
  /** Image models' prompt tokenizers (their text encoders' CLIP tokenizers). */
  promptTokenizers: PromptTokenizers;
  /** Seals and signs reasoning for replay, under the data dir's server secret. */
  sealer: Sealer;
  /** Prometheus instruments (GET /metrics). */
  metrics: Metrics;
  /** Permissions, billing and rate limits of every keyed request (src/access/gate.ts). */
  gate: Gate;
  /** Responses being produced in this process: stored streams and background jobs, their listeners and cancels. */
  live: LiveResponses;
  /** The bytes of uploaded files (their rows are in the database). */
  files: FileStorage;
  /** Reads, screens and decodes a request's media before its prompt is built (src/media/media-intake.ts). */
  intake: CoreIntake;
  /**
   * The Redis replicas share (KILN_REDIS_URL), for the dashboard's sign-in counts and one-shot notes, with the key those
   * notes are sealed under (derived from the server secret); absent: one kiln keeps them in its memory.
   */
  shared?: { redis: RedisConnection; flashKey: Buffer };
}
