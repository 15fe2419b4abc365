// Per-team request limits through the app: the RPM counted at the edge for every keyed endpoint, 429 with both
// retry headers, the x-ratelimit headers on every keyed answer, tiers from config and the database.
import { describe, expect, test } from "bun:test";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { upsertTier } from "../../src/db/tiers-repo.ts";
import { testKiln } from "../helpers/kiln.ts";

describe("requests per minute", () => {
  test("a burst past a team's RPM gets 429 with Retry-After and retry-after-ms, while a second team is unaffected", async () => {
    const k = await testKiln();
    await updateTeam(k.deps.db, k.teamId, { rpmLimit: 5 });
    const other = await createTeam(k.deps.db, "other");
    await updateTeam(k.deps.db, other.id, { rpmLimit: 5 });
    const otherKey = (await createKey(k.deps.db, other.id, "o")).key;
    // Two keys of the first team share its limit.
    const secondKey = (await createKey(k.deps.db, k.teamId, "second")).key;
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => k.req("/v1/models", { key: i % 2 ? secondKey : k.key })));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = burst.find((r) => r.status === 429)!;
    expect(await refused.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded", param: null } });
    // 5 per minute refill one every 12 s: the true wait is at most that, and both headers say the same.
    const ms = Number(refused.headers.get("retry-after-ms"));
    expect(ms).toBeGreaterThan(11_000);
    expect(ms).toBeLessThanOrEqual(12_000);
    expect(refused.headers.get("retry-after")).toBe(String(Math.ceil(ms / 1000)));
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    // The same moment, the other team has its whole budget.
    const theirs = await k.req("/v1/models", { key: otherKey });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get("x-ratelimit-limit-requests")).toBe("5");
    expect(theirs.headers.get("x-ratelimit-remaining-requests")).toBe("4");
  });

  test("every keyed endpoint counts, whatever its answer; unkeyed ones do not", async () => {
    const k = await testKiln();
    await updateTeam(k.deps.db, k.teamId, { rpmLimit: 3 });
    expect((await k.req("/v1/status", { key: null })).headers.get("x-ratelimit-limit-requests")).toBeNull();
    expect((await k.req("/v1/models/nope-v1")).status).toBe(404);
    expect((await k.req("/v1/chat/completions", { method: "POST", json: { model: "x" } })).status).toBe(400);
    const third = await k.req("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" });
    expect(third.status).toBe(400);
    expect(third.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    // Refused before the body is read.
    const res = await k.req("/v1/messages", { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" });
    expect(res.status).toBe(429);
    expect(((await res.json()) as any).type).toBe("error");
  });

  test("headers on every keyed answer: requests and tokens, OpenAI's names and formats; none for a limit a team does not have", async () => {
    const k = await testKiln({ env: { KILN_TIERS: "free:60:40000,pro:-:90000", KILN_DEFAULT_TIER: "free" } });
    const res = await k.req("/v1/models");
    expect(res.headers.get("x-ratelimit-limit-requests")).toBe("60");
    expect(res.headers.get("x-ratelimit-remaining-requests")).toBe("59");
    expect(res.headers.get("x-ratelimit-reset-requests")).toBe("1s");
    expect(res.headers.get("x-ratelimit-limit-tokens")).toBe("40000");
    expect(res.headers.get("x-ratelimit-remaining-tokens")).toBe("40000");
    expect(res.headers.get("x-ratelimit-reset-tokens")).toBe("0ms");
    // Errors carry them too.
    expect((await k.req("/v1/models/nope-v1")).headers.get("x-ratelimit-remaining-requests")).toBe("58");
    await updateTeam(k.deps.db, k.teamId, { tier: "pro" });
    const pro = await k.req("/v1/models");
    expect(pro.headers.get("x-ratelimit-limit-requests")).toBeNull();
    expect(pro.headers.get("x-ratelimit-limit-tokens")).toBe("90000");
    // A database tier of the same name wins over config, from the next request on; a team override wins over both.
    await upsertTier(k.deps.db, { name: "pro", rpm: 7, tpm: null });
    const db = await k.req("/v1/models");
    expect(db.headers.get("x-ratelimit-limit-requests")).toBe("7");
    expect(db.headers.get("x-ratelimit-limit-tokens")).toBeNull();
    await updateTeam(k.deps.db, k.teamId, { rpmLimit: 2 });
    expect((await k.req("/v1/models")).headers.get("x-ratelimit-limit-requests")).toBe("2");
  });

  test("a team with no tier and no overrides is unlimited and gets no rate-limit headers", async () => {
    const k = await testKiln();
    const answers = await Promise.all(Array.from({ length: 50 }, () => k.req("/v1/models")));
    expect(answers.every((r) => r.status === 200 && !r.headers.has("x-ratelimit-limit-requests"))).toBe(true);
  });
});
