// Token buckets in Redis, shared by every replica: one Lua script per operation runs atomically in Redis and repeats
// bucket.ts's integer arithmetic step for step, so a team gets exactly its limit however many replicas it reaches.
import type { RedisConnection } from "../redis/connection.ts";
import { LuaScript } from "../redis/connection.ts";
import { type BucketState, checkArgs, type TakeResult } from "./bucket.ts";
import type { RateLimiter } from "./limiter.ts";

export const KEY_PREFIX = "kiln:rl:";
/**
 * A bucket's key lives this long past the moment it is full again (then a missing bucket is the same full one). The
 * minute keeps the two limiters agreeing to the unit: a limit raised on a bucket that was just full refills from where it was.
 */
export const GRACE_MS = 60_000;

// KEYS[1]: the bucket's hash {level, at}. ARGV[1]: limit, ARGV[2]: amount or delta, ARGV[3]: the time in ms, or ""
// for Redis's own clock (replicas' clocks differ; Redis's is the one they share), ARGV[4]: GRACE_MS.
const PRELUDE = `
local SCALE = 60000
local limit = tonumber(ARGV[1])
local t
if ARGV[3] ~= '' then
  t = tonumber(ARGV[3])
else
  local now = redis.call('TIME')
  t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
local cap = limit * SCALE
local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
local exists = stored[1] ~= false
-- refill(): a missing bucket is full; else refilled at limit a millisecond, never above the capacity
local level, at = cap, t
if exists then
  level = math.min(cap, tonumber(stored[1]) + math.max(0, t - tonumber(stored[2])) * limit)
  at = math.max(tonumber(stored[2]), t)
end
local function resetMs()
  return math.ceil((cap - level) / limit)
end
local function remaining()
  return math.max(0, math.floor(level / SCALE))
end
local function save()
  redis.call('HSET', KEYS[1], 'level', level, 'at', at)
  redis.call('PEXPIRE', KEYS[1], resetMs() + tonumber(ARGV[4]))
end
`;

// takeFrom(): {1, remaining, resetMs, 0} when taken; {0, remaining, resetMs, wait} when not (wait -1: never fits).
const TAKE = new LuaScript("ratelimit-take", `${PRELUDE}
local amount = tonumber(ARGV[2])
local need = amount * SCALE
if level >= need then
  level = level - need
  save()
  return {1, remaining(), resetMs(), 0}
end
save()
local wait = -1
if amount <= limit then wait = math.ceil((need - level) / limit) end
return {0, remaining(), resetMs(), wait}
`);

// adjustLevel(): moved by delta without refusal, never above the capacity.
const ADJUST = new LuaScript("ratelimit-adjust", `${PRELUDE}
level = math.min(cap, level + tonumber(ARGV[2]) * SCALE)
save()
return 0
`);

// A missing bucket is full and stays missing; a present one is brought up to date, as the memory limiter does.
const PEEK = new LuaScript("ratelimit-peek", `${PRELUDE}
if not exists then return {limit, 0} end
save()
return {remaining(), resetMs()}
`);

/** A take script's reply as the limiter answers it. */
export function takeReply(reply: unknown, limit: number): TakeResult {
  const [ok, remaining, resetMs, wait] = reply as [number, number, number, number];
  if (ok === 1) return { ok: true, limit, remaining, resetMs };
  return { ok: false, retryAfterMs: wait < 0 ? Infinity : wait, limit, remaining, resetMs };
}

export class RedisRateLimiter implements RateLimiter {
  /** `now`: tests only, a clock passed into the scripts instead of Redis's TIME. */
  constructor(private readonly redis: RedisConnection, private readonly opts: { now?: () => number; prefix?: string } = {}) {}

  private run(script: LuaScript, key: string, limit: number, amount: number): Promise<unknown> {
    const t = this.opts.now ? String(Math.floor(this.opts.now())) : "";
    return this.redis.run(script, [(this.opts.prefix ?? KEY_PREFIX) + key], [limit, amount, t, GRACE_MS]);
  }

  async take(key: string, limit: number, amount: number): Promise<TakeResult> {
    checkArgs(limit, amount);
    return takeReply(await this.run(TAKE, key, limit, amount), limit);
  }

  async adjust(key: string, limit: number, delta: number): Promise<void> {
    checkArgs(limit, Math.abs(delta));
    await this.run(ADJUST, key, limit, delta);
  }

  async peek(key: string, limit: number): Promise<BucketState> {
    checkArgs(limit, 0);
    const [remaining, resetMs] = (await this.run(PEEK, key, limit, 0)) as [number, number];
    return { limit, remaining, resetMs };
  }
}
