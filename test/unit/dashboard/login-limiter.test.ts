// Sign-in counts per (typed name, address) and per address: the in-process counter with a clock of its own, and the
// Redis one every replica shares, held to the same rules.
import { describe, expect, test } from "bun:test";
import { type Attempt, loginKeys, type LoginLimiter, MemoryLoginLimiter } from "../../../src/dashboard/accounts/login-limiter.ts";
import { RedisLoginLimiter } from "../../../src/dashboard/accounts/redis-login-limiter.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { redisPerFile } from "../../helpers/redis-server.ts";

const LIMITS = { perPair: 5, perAddress: 20, windowMs: 60_000 };

function limiter() {
  const clock = { t: 1_000_000 };
  return { clock, l: new MemoryLoginLimiter(LIMITS, () => clock.t) };
}

const shared = redisPerFile();
let run = 0;
/** One replica's limiter: its own connection to the shared Redis, keys apart from other tests'. */
function replica(prefix: string): RedisLoginLimiter {
  const conn = new RedisConnection(shared.redis.url);
  shared.track(conn);
  return new RedisLoginLimiter(conn, LIMITS, prefix);
}

const attempt = async (l: LoginLimiter, name: string, address: string | null): Promise<Attempt> => {
  const r = await l.begin(name, address);
  if (!("attempt" in r)) throw new Error(`refused: wait ${r.waitMs} ms`);
  return r.attempt;
};
const refused = async (l: LoginLimiter, name: string, address: string | null) => "waitMs" in (await l.begin(name, address));

describe("sign-in attempts (in memory)", () => {
  test("five attempts of one name from one address in a minute: the sixth is refused until the first is a minute old", async () => {
    const { clock, l } = limiter();
    for (let i = 0; i < 5; i++) {
      await attempt(l, "alice", "10.0.0.1");
      clock.t += 1000;
    }
    expect(await l.begin("Alice", "10.0.0.1")).toEqual({ waitMs: 55_000 });
    clock.t += 55_000;
    expect(await refused(l, "alice", "10.0.0.1")).toBe(false);
  });

  test("five failures for admin from one address leave admin free from another", async () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) await attempt(l, "admin", "203.0.113.9");
    expect(await refused(l, "admin", "203.0.113.9")).toBe(true);
    expect(await refused(l, "admin", "198.51.100.4")).toBe(false);
  });

  test("attempts count when they start: a parallel burst is limited like a sequence", async () => {
    const { l } = limiter();
    const started = await Promise.all(Array.from({ length: 40 }, () => l.begin("bob", "192.0.2.1")));
    expect(started.filter((s) => "attempt" in s)).toHaveLength(5);
    expect(started.slice(5).every((s) => "waitMs" in s && s.waitMs > 0)).toBe(true);
  });

  test("twenty attempts from one address block it for every name; another address is free", async () => {
    const { l } = limiter();
    for (let i = 0; i < 20; i++) await attempt(l, `user${i}`, "192.0.2.1");
    expect(await refused(l, "someone-else", "192.0.2.1")).toBe(true);
    expect(await refused(l, "someone-else", "192.0.2.2")).toBe(false);
  });

  test("a right password takes its attempt back and forgives the pair's failures, not the address's others", async () => {
    const { l } = limiter();
    for (let i = 0; i < 4; i++) await attempt(l, "bob", "192.0.2.7");
    await l.succeed(await attempt(l, "bob", "192.0.2.7"));
    for (let i = 0; i < 5; i++) await attempt(l, "bob", "192.0.2.7");
    expect(await refused(l, "bob", "192.0.2.7")).toBe(true);
    // The address holds 4 + 5 failures: 11 more attempts fit, the 12th does not.
    for (let i = 0; i < 11; i++) await attempt(l, `other${i}`, "192.0.2.7");
    expect(await refused(l, "carol", "192.0.2.7")).toBe(true);
  });

  test("without an address the name counts alone", async () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) await attempt(l, "erin", null);
    expect(await refused(l, "erin", null)).toBe(true);
    expect(await refused(l, "frank", null)).toBe(false);
  });

  test("an IPv6 host counts by its /64, whatever address in it it uses", async () => {
    const { l } = limiter();
    for (let i = 0; i < 20; i++) await attempt(l, `u${i}`, `2001:db8:1:2::${i.toString(16)}`);
    expect(await refused(l, "x", "2001:db8:1:2:ffff::1")).toBe(true);
    expect(await refused(l, "x", "2001:db8:1:3::1")).toBe(false);
  });

  test("the typed name is kept only as a digest (a password typed as a name is stored nowhere)", () => {
    const [pair, address] = loginKeys("Hunter2-Secret ", "192.0.2.1", LIMITS).map(([k]) => k);
    expect(pair).toBe(loginKeys("hunter2-secret", "192.0.2.1", LIMITS)[0]![0]);
    expect(pair).not.toContain("hunter2");
    expect(pair).toMatch(/^pair:[0-9a-f]{32}:192\.0\.2\.1$/);
    expect(address).toBe("address:192.0.2.1");
  });

  test("a flood of addresses is forgotten oldest first, and memory stays bounded", async () => {
    const { clock, l } = limiter();
    for (let i = 0; i < 60_000; i++) await l.begin(`n${i}`, `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`);
    clock.t += 1500;
    await l.begin("last", "2001:db8:ffff:ffff::1");
    expect((l as unknown as { attempts: Map<string, number[]> }).attempts.size).toBeLessThanOrEqual(100_002);
  });
});

describe("sign-in attempts in Redis, shared by replicas", () => {
  test("three replicas: five failures for a pair anywhere refuse it everywhere; another address is free on all", async () => {
    const prefix = `ll${++run}:`;
    const [a, b, c] = [replica(prefix), replica(prefix), replica(prefix)];
    for (const r of [a, b, c, a, b]) await attempt(r!, "admin", "203.0.113.9");
    for (const r of [a, b, c]) expect(await refused(r!, "admin", "203.0.113.9")).toBe(true);
    const wait = (await c!.begin("ADMIN", "203.0.113.9")) as { waitMs: number };
    expect(wait.waitMs).toBeGreaterThan(55_000);
    expect(wait.waitMs).toBeLessThanOrEqual(60_000);
    for (const r of [a, b, c]) expect(await refused(r!, "admin", "198.51.100.4")).toBe(false);
  });

  test("a racing burst across replicas admits exactly five; twenty per address across names", async () => {
    const prefix = `ll${++run}:`;
    const rs = [replica(prefix), replica(prefix), replica(prefix)];
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => rs[i % 3]!.begin("bob", "192.0.2.1")));
    expect(burst.filter((s) => "attempt" in s)).toHaveLength(5);
    const names = await Promise.all(Array.from({ length: 30 }, (_, i) => rs[i % 3]!.begin(`user${i}`, "192.0.2.2")));
    expect(names.filter((s) => "attempt" in s)).toHaveLength(20);
  });

  test("a right password forgives the pair and gives back its own mark on the address", async () => {
    const prefix = `ll${++run}:`;
    const [a, b] = [replica(prefix), replica(prefix)];
    for (let i = 0; i < 4; i++) await attempt(a, "carol", "192.0.2.7");
    await b.succeed(await attempt(b, "carol", "192.0.2.7"));
    for (let i = 0; i < 5; i++) await attempt(a, "carol", "192.0.2.7");
    expect(await refused(b, "carol", "192.0.2.7")).toBe(true);
    for (let i = 0; i < 11; i++) await attempt(b, `o${i}`, "192.0.2.7");
    expect(await refused(a, "dave", "192.0.2.7")).toBe(true);
  });
});
