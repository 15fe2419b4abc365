// Per-team RPM and TPM over the in-memory limiter: what is taken, what a refusal says, what goes back.
import { describe, expect, test } from "bun:test";
import { seconds, TeamRateLimits, tokensError } from "../../../src/access/team-limits.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { upsertTier } from "../../../src/db/tiers-repo.ts";
import type { LimitSnapshot } from "../../../src/ratelimit/headers.ts";
import { MemoryRateLimiter } from "../../../src/ratelimit/limiter.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup(tiers: { name: string; rpm: number | null; tpm: number | null }[] = [], defaultTier?: string) {
  const db = await openDatabase(tempDir("kiln-limits-"));
  const team = await createTeam(db, "t");
  let now = 1_000_000;
  const limiter = new MemoryRateLimiter(() => now);
  const limits = new TeamRateLimits({ db, config: { tiers, defaultTier }, limiter });
  return { db, team, limiter, limits, tick: (ms: number) => void (now += ms) };
}

describe("TeamRateLimits", () => {
  test("limits: the team's own values over its tier's; a database tier wins over a config tier of the same name", async () => {
    const s = await setup([{ name: "pro", rpm: 10, tpm: 1000 }], "pro");
    expect(await s.limits.limitsOf(s.team)).toEqual({ rpm: 10, tpm: 1000, tier: "pro" });
    await upsertTier(s.db, { name: "pro", rpm: 20, tpm: null });
    expect(await s.limits.limitsOf(s.team)).toEqual({ rpm: 20, tpm: null, tier: "pro" });
    expect(await s.limits.limitsOf(await updateTeam(s.db, s.team.id, { rpmLimit: 3 }))).toEqual({ rpm: 3, tpm: null, tier: "pro" });
  });

  test("RPM: one request each; past the limit a 429 with the true wait, and the snapshot says where the team stands", async () => {
    const s = await setup();
    const limits = { rpm: 2, tpm: null, tier: null };
    const snap: LimitSnapshot = {};
    await s.limits.look(s.team.id, limits, snap);
    expect(snap).toEqual({ requests: { limit: 2, remaining: 2, resetMs: 0 } });
    expect(await s.limits.takeRequest(s.team, limits, snap)).toBe(true);
    expect(await s.limits.takeRequest(s.team, limits, snap)).toBe(true);
    const refused = await s.limits.takeRequest(s.team, limits, snap).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, code: "rate_limit_exceeded", headers: { "retry-after": "30", "retry-after-ms": "30000" } });
    expect(refused.message).toBe("Rate limit reached for requests per minute (RPM) of team 't': limit 2. Retry in 30 s.");
    expect(snap.requests!.remaining).toBe(0);
    // A request given back is a slot again at once.
    await s.limits.giveBackRequest(s.team.id, limits);
    expect(await s.limits.takeRequest(s.team, limits, snap)).toBe(true);
    // No RPM: nothing taken.
    expect(await s.limits.takeRequest(s.team, { rpm: null, tpm: null, tier: null }, {})).toBe(false);
  });

  test("TPM: a reservation that does not fit is refused; a forced one goes into debt; reconcile gives back what was not used", async () => {
    const s = await setup();
    const limits = { rpm: null, tpm: 1000, tier: null };
    const snap: LimitSnapshot = {};
    expect(await s.limits.reserveTokens(s.team, limits, 700, snap, false)).toBe(true);
    expect(snap.tokens!.remaining).toBe(300);
    await expect(s.limits.reserveTokens(s.team, limits, 400, snap, false)).rejects.toMatchObject({ status: 429, headers: { "retry-after-ms": "6000" } });
    expect(await s.limits.reserveTokens(s.team, limits, 400, snap, true)).toBe(true);
    expect((await s.limiter.peek(`team:${s.team.id}:tpm`, 1000)).remaining).toBe(0);
    // 700 reserved, 200 used: 500 come back (the bucket was 100 in debt).
    s.limits.reconcile(s.team.id, limits, 700, 200);
    await Bun.sleep(0);
    expect((await s.limiter.peek(`team:${s.team.id}:tpm`, 1000)).remaining).toBe(400);
    expect(await s.limits.reserveTokens(s.team, { rpm: null, tpm: null, tier: null }, 10, snap, false)).toBe(false);
  });

  test("a request alone over the TPM is told waiting never helps", () => {
    const e = tokensError("t", 100, 150, Infinity);
    expect(e.headers).toEqual({ "x-should-retry": "false" });
    expect(e.message).toStartWith("Request too large for the tokens per minute (TPM) of team 't': limit 100, requested 150");
    expect(tokensError("t", 100, 50, 1500).headers).toEqual({ "retry-after": "2", "retry-after-ms": "1500" });
    expect([seconds(1500), seconds(30_000), seconds(0.4)]).toEqual(["1.5 s", "30 s", "0.001 s"]);
  });
});
