// Where the gate keeps rate-limit counts and billing holds, and where journaled charges are announced: this process's
// memory by default, or Redis (KILN_REDIS_URL) when several replicas must share them exactly.
import type { JournalIndex } from "../billing/journal-index.ts";
import { RedisJournalIndex } from "../billing/redis-journal-index.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log/logger.ts";
import { MemoryRateLimiter, type RateLimiter } from "../ratelimit/limiter.ts";
import { RedisRateLimiter } from "../ratelimit/redis-limiter.ts";
import { RedisConnection } from "../redis/connection.ts";
import { type HoldStore, MemoryHoldStore } from "./hold-store.ts";
import { RedisHoldStore } from "./redis-holds.ts";

export interface AccessStores {
  limiter: RateLimiter;
  holds: HoldStore;
  /** Where the settlement journal's charges are announced to the other replicas (none alone: its journal is all there is). */
  journal: JournalIndex | null;
  /** The Redis connection, when there is one. */
  redis: RedisConnection | null;
  close(): void;
}

export function accessStores(config: Pick<Config, "redisUrl">, logger?: Logger): AccessStores {
  if (!config.redisUrl) {
    const holds = new MemoryHoldStore();
    return { limiter: new MemoryRateLimiter(), holds, journal: null, redis: null, close: () => holds.close() };
  }
  const redis = new RedisConnection(config.redisUrl, { logger });
  const holds = new RedisHoldStore(redis);
  return {
    limiter: new RedisRateLimiter(redis),
    holds,
    journal: new RedisJournalIndex(redis),
    redis,
    close() {
      holds.close();
      redis.close();
    },
  };
}
