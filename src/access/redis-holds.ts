// Billing holds in Redis, so racing requests on different replicas see each other's: per team, a hash of running holds
// (id → micro-units) whose leases this process renews while their requests run (a replica that dies holds nothing once
// they run out), and the recently released holds in release order (hold-store.ts's bookkeeping, in Lua).
import type { RedisConnection } from "../redis/connection.ts";
import { LuaScript } from "../redis/connection.ts";
import { type HoldResult, type HoldStore, RELEASED_KEPT_MS } from "./hold-store.ts";

export const HOLD_PREFIX = "kiln:hold:";
/** A hold not renewed for this long is dropped: its replica is gone. Renewed every sixth of it, so Redis may be away ~50 s. */
export const LEASE_MS = 60_000;

// KEYS: [1] active hash id → micros, [2] lease zset id → expiry ms, [3] released zset "micros:id" → seq, [4] seq counter.
// The last ARGV is the time in ms, or "" for Redis's clock. A release's seq is its time in µs, raised past the last one.
const PRELUDE = `
local t
if ARGV[#ARGV] ~= '' then
  t = tonumber(ARGV[#ARGV])
else
  local now = redis.call('TIME')
  t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
local function lapse()
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', t)
  for _, id in ipairs(gone) do redis.call('HDEL', KEYS[1], id) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', t) end
end
local function keep(ms)
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ms) end
end
`;

// ARGV: id, micros, budget, mark, lease, kept, now → {1, available after} or {0, available}: decide(heldSince(...)).
const HOLD = new LuaScript("holds-hold", `${PRELUDE}
lapse()
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. string.format('%.0f', (t - tonumber(ARGV[6])) * 1000))
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do held = held + tonumber(v) end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[4], '+inf')) do held = held + tonumber(string.match(m, '^(%d+):')) end
local micros = tonumber(ARGV[2])
local available = tonumber(ARGV[3]) - held
if micros > available then return {0, available} end
redis.call('HSET', KEYS[1], ARGV[1], micros)
redis.call('ZADD', KEYS[2], t + tonumber(ARGV[5]), ARGV[1])
keep(tonumber(ARGV[5]) + tonumber(ARGV[6]))
return {1, available - micros}
`);

// ARGV: id, lease, kept, now. A hold already gone (released, or lapsed) changes nothing.
const RELEASE = new LuaScript("holds-release", `${PRELUDE}
local micros = redis.call('HGET', KEYS[1], ARGV[1])
if not micros then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local seq = math.max(tonumber(redis.call('GET', KEYS[4]) or '0') + 1, t * 1000)
redis.call('SET', KEYS[4], string.format('%.0f', seq))
redis.call('ZADD', KEYS[3], seq, micros .. ':' .. ARGV[1])
keep(tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1
`);

// ARGV: lease, kept, id₁, micros₁, …, now. Running holds get a new lease; one that lapsed while Redis was away comes back.
const RENEW = new LuaScript("holds-renew", `${PRELUDE}
for i = 3, #ARGV - 1, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[2], t + tonumber(ARGV[1]), ARGV[i])
end
keep(tonumber(ARGV[1]) + tonumber(ARGV[2]))
return 0
`);

// ARGV: now → the sum of the running holds.
const HELD = new LuaScript("holds-held", `${PRELUDE}
lapse()
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do held = held + tonumber(v) end
return held
`);

export interface RedisHoldOptions {
  /** Tests only: a clock passed into the scripts instead of Redis's TIME. */
  now?: () => number;
  prefix?: string;
  leaseMs?: number;
}

export class RedisHoldStore implements HoldStore {
  /** This process's running holds, renewed until released. */
  private readonly mine = new Map<string, { teamId: number; micros: number }>();
  private renewer: Timer | null = null;
  private readonly leaseMs: number;

  constructor(private readonly redis: RedisConnection, private readonly opts: RedisHoldOptions = {}) {
    this.leaseMs = opts.leaseMs ?? LEASE_MS;
  }

  private keys(teamId: number): string[] {
    const base = `${this.opts.prefix ?? HOLD_PREFIX}${teamId}:`;
    return [`${base}active`, `${base}lease`, `${base}released`, `${base}seq`];
  }

  private time(): string {
    return this.opts.now ? String(Math.floor(this.opts.now())) : "";
  }

  async mark(teamId: number): Promise<number> {
    return Number((await this.redis.send("GET", [this.keys(teamId)[3]!])) ?? 0);
  }

  async hold(teamId: number, holdId: string, micros: number, budget: number, mark: number): Promise<HoldResult> {
    const args = [holdId, micros, budget, mark, this.leaseMs, RELEASED_KEPT_MS, this.time()];
    const [ok, available] = (await this.redis.run(HOLD, this.keys(teamId), args)) as [number, number];
    if (ok !== 1) return { ok: false, available };
    this.mine.set(holdId, { teamId, micros });
    this.renewer ??= setInterval(() => void this.renew().catch(() => {}), Math.ceil(this.leaseMs / 6));
    this.renewer.unref();
    return { ok: true, available };
  }

  async release(teamId: number, holdId: string): Promise<void> {
    // Forgotten here first, so no renewal brings it back; if Redis cannot be told, its lease runs out instead.
    this.mine.delete(holdId);
    if (this.mine.size === 0) this.stopRenewing();
    await this.redis.run(RELEASE, this.keys(teamId), [holdId, this.leaseMs, RELEASED_KEPT_MS, this.time()]);
  }

  async heldBy(teamId: number): Promise<number> {
    return Number(await this.redis.run(HELD, this.keys(teamId), [this.time()]));
  }

  /** One script call per team with running holds here: each gets a new lease. */
  async renew(): Promise<void> {
    const byTeam = new Map<number, (string | number)[]>();
    for (const [id, h] of this.mine) {
      const list = byTeam.get(h.teamId) ?? [];
      list.push(id, h.micros);
      byTeam.set(h.teamId, list);
    }
    await Promise.all([...byTeam].map(([teamId, pairs]) => this.redis.run(RENEW, this.keys(teamId), [this.leaseMs, RELEASED_KEPT_MS, ...pairs, this.time()])));
  }

  close(): void {
    this.stopRenewing();
  }

  private stopRenewing(): void {
    if (this.renewer) clearInterval(this.renewer);
    this.renewer = null;
  }
}
