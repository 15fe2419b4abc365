// Sign-in attempts counted in Redis, so every replica behind a load balancer sees the same counts: each count is a
// sorted set of attempt marks scored by their start time on Redis's clock (the replicas' clocks differ), and checking
// every count and adding the attempt to each is one Lua script, so racing attempts on any replicas meet the limit as a
// sequence would. The keys and the arithmetic are login-limiter.ts's.
import type { RedisConnection } from "../../redis/connection.ts";
import { LuaScript } from "../../redis/connection.ts";
import { type Attempt, type Begun, LOGIN_LIMITS, type LoginLimiter, type LoginLimits, loginKeys } from "./login-limiter.ts";

export const LOGIN_PREFIX = "kiln:login:";

// KEYS: the counts. ARGV: window ms, each count's limit, a unique suffix for the mark. → {0, wait ms} or {1, mark}.
const BEGIN = new LuaScript("login-begin", `
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window = tonumber(ARGV[1])
local wait = 0
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', t - window)
  local limit = tonumber(ARGV[i + 1])
  local n = redis.call('ZCARD', KEYS[i])
  if n >= limit then
    local oldest = redis.call('ZRANGE', KEYS[i], n - limit, n - limit, 'WITHSCORES')
    wait = math.max(wait, tonumber(oldest[2]) + window - t)
  end
end
if wait > 0 then return {0, wait} end
local mark = t .. ':' .. ARGV[#ARGV]
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], t, mark)
  redis.call('PEXPIRE', KEYS[i], window)
end
return {1, mark}
`);

export class RedisLoginLimiter implements LoginLimiter {
  constructor(private readonly redis: RedisConnection, private readonly limits: LoginLimits = LOGIN_LIMITS, private readonly prefix = LOGIN_PREFIX) {}

  async begin(name: string, address: string | null): Promise<Begun> {
    const keys = loginKeys(name, address, this.limits);
    const reply = (await this.redis.run(BEGIN, keys.map(([k]) => this.prefix + k), [this.limits.windowMs, ...keys.map(([, limit]) => limit), crypto.randomUUID()])) as [number, number | string];
    if (reply[0] !== 1) return { waitMs: Number(reply[1]) };
    return { attempt: { keys: keys.map(([k]) => k), id: String(reply[1]) } };
  }

  async succeed(a: Attempt): Promise<void> {
    for (const key of a.keys) {
      if (key.startsWith("pair:")) await this.redis.send("DEL", [this.prefix + key]);
      else await this.redis.send("ZREM", [this.prefix + key, a.id]);
    }
  }
}
