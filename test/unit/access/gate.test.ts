import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Gate } from "../../../src/access/gate.ts";
import { DEFAULT_TIER_PRICES } from "../../../src/billing/tier-prices.ts";
import { authenticate } from "../../../src/auth/authenticate.ts";
import { credit, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey, restrictKey, revokeKey } from "../../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { emptyUsage } from "../../../src/inference/blocks.ts";
import type { ServiceTier } from "../../../src/inference/service-tier.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import type { LimitSnapshot } from "../../../src/ratelimit/headers.ts";
import { MemoryRateLimiter } from "../../../src/ratelimit/limiter.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";

// 1 and 4 micro-units per input and output token.
const model: ModelEntry = {
  ...parseManifest(fakeManifest("gate-model-v1", { pricing: { input_per_million: 1, output_per_million: 4, per_image: null } }), ["fp32"]),
  dir: "/nowhere",
};

async function setup() {
  const db = await openDatabase(tempDir("kiln-gate-"));
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  let now = 5_000_000;
  const limiter = new MemoryRateLimiter(() => now);
  const gate = new Gate({ db, config: { tiers: [], tierPrices: DEFAULT_TIER_PRICES }, limiter });
  /** One request through the edge part of the gate; returns its id (for admission) and its rate-limit snapshot. */
  const enter = async () => {
    const v = { requestId: `req_${crypto.randomUUID()}`, auth: await authenticate(db, new Headers({ authorization: `Bearer ${key.key}` })), path: "/v1/chat/completions", snapshot: {} as LimitSnapshot };
    await gate.enter(v);
    return { id: v.requestId, rateLimit: v.snapshot };
  };
  const admission = (requestId: string, inputTokens: number, maxOutputTokens: number, choices = 1) => ({
    scope: { requestId, teamId: team.id, keyId: key.id, endpoint: "chat" }, model, inputTokens, maxOutputTokens, choices,
  });
  /** Admission of a run in a service tier (undefined: none named). */
  const admit = (requestId: string, tier: ServiceTier | undefined, inputTokens = 10, maxOutputTokens = 100) => {
    const a = admission(requestId, inputTokens, maxOutputTokens);
    return gate.admit({ ...a, scope: { ...a.scope, ...(tier ? { tier } : {}) } });
  };
  const left = async (bucket: string, limit: number) => (await limiter.peek(`team:${team.id}:${bucket}`, limit)).remaining;
  return { db, team, key, gate, limiter, enter, admission, admit, left, tick: (ms: number) => void (now += ms) };
}

describe("Gate", () => {
  test("TPM: input + max output × choices reserved at admission; the rest given back at release", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 1000 });
    const meta = await s.enter();
    expect(meta.rateLimit!.tokens).toEqual({ limit: 1000, remaining: 1000, resetMs: 0 });
    const ticket = await s.gate.admit(s.admission(meta.id, 100, 200, 2));
    expect(meta.rateLimit!.tokens!.remaining).toBe(500);
    const other = await s.enter();
    await expect(s.gate.admit(s.admission(other.id, 100, 450))).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    ticket.release({ ...emptyUsage(), inputTokens: 100, outputTokens: 30 });
    ticket.release({ ...emptyUsage(), inputTokens: 100, outputTokens: 30 });
    expect((await s.limiter.peek(`team:${s.team.id}:tpm`, 1000)).remaining).toBe(870);
    expect((await s.gate.admit(s.admission(other.id, 100, 450))).release).toBeFunction();
  });

  test("billing: racing admissions hold their worst case, so together they never overspend the balance", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    // Worst case of each: 10 × 1 + 100 × 4 = 410 micro-units; the balance covers two.
    await credit(s.db, s.team.id, 900, null);
    const metas = await Promise.all(Array.from({ length: 5 }, () => s.enter()));
    const results = await Promise.allSettled(metas.map((m) => s.gate.admit(s.admission(m.id, 10, 100))));
    const admitted = results.filter((r) => r.status === "fulfilled");
    expect(admitted).toHaveLength(2);
    const refusal = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refusal.reason).toMatchObject({ status: 402, type: "billing_error", code: "billing_not_configured" });
    expect(refusal.reason.message).toContain("may cost up to 0.00041");
    expect(refusal.reason.message).toContain("0.00008 is available");
    // A released hold frees its share again.
    (admitted[0] as PromiseFulfilledResult<{ release(u: null): void }>).value.release(null);
    const again = await s.enter();
    await expect(s.gate.admit(s.admission(again.id, 10, 100))).resolves.toBeDefined();
  });

  test("billing: the hold prices the prompt at the dearer of the input and cached-input rates", async () => {
    const priced = (cached: number): ModelEntry => ({ ...model, pricing: { ...model.pricing, cachedInputPerMillion: cached } });
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    // Cache reads dearer than input (3 vs 1): the worst case is a full hit, 10 × 3 + 100 × 4 = 430.
    await credit(s.db, s.team.id, 429, null);
    const m = await s.enter();
    const refusal = s.gate.admit({ ...s.admission(m.id, 10, 100), model: priced(3) });
    await expect(refusal).rejects.toMatchObject({ status: 402, message: expect.stringContaining("may cost up to 0.00043") });
    // Cheaper cache reads: the worst case is a miss, 10 × 1 + 100 × 4 = 410, which 429 covers.
    const cheap = await s.gate.admit({ ...s.admission(m.id, 10, 100), model: priced(0.5) });
    cheap.release(null);
    await credit(s.db, s.team.id, 1, null);
    await expect(s.gate.admit({ ...s.admission(m.id, 10, 100), model: priced(3) })).resolves.toBeDefined();
  });

  test("a TPM refusal after the balance check releases the hold it placed", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 410, null);
    await updateTeam(s.db, s.team.id, { tpmLimit: 50 });
    const m = await s.enter();
    await expect(s.gate.admit(s.admission(m.id, 10, 100))).rejects.toMatchObject({ status: 429 });
    await updateTeam(s.db, s.team.id, { tpmLimit: null });
    const n = await s.enter();
    await expect(s.gate.admit(s.admission(n.id, 10, 100))).resolves.toBeDefined();
  });

  test("a request admitted without passing the edge (a background job) is checked against its team as it is now", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 100 });
    await expect(s.gate.admit(s.admission("req_background", 50, 60))).rejects.toMatchObject({ status: 429 });
    await expect(s.gate.admit(s.admission("req_background2", 50, 40))).resolves.toBeDefined();
  });

  test("RPM refusal carries the true wait; the limit's refill admits again after it", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { rpmLimit: 2 });
    await s.enter();
    await s.enter();
    const refused = await s.enter().catch((e) => e);
    expect(refused).toMatchObject({ status: 429, headers: { "retry-after": "30", "retry-after-ms": "30000" } });
    s.tick(30_000);
    await expect(s.enter()).resolves.toBeDefined();
  });
});

describe("Gate, both limits", () => {
  test("a request refused for its tokens gives back the request it took, so its Retry-After is the whole wait", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { rpmLimit: 2, tpmLimit: 10_000 });
    const first = await s.enter();
    await s.gate.admit(s.admission(first.id, 8000, 1000));
    const second = await s.enter();
    // 100 tokens short at 10,000 a minute: 600 ms.
    const refused = await s.gate.admit(s.admission(second.id, 100, 1000)).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, headers: { "retry-after-ms": "600" } });
    // The RPM (2 a minute, both taken) would need 30 s for a new slot; the refused request's slot came back instead.
    s.tick(600);
    const again = await s.enter();
    await expect(s.gate.admit(s.admission(again.id, 100, 1000))).resolves.toBeDefined();
  });

  test("a resumed admission (a job acknowledged before a restart) is not refused by the TPM, yet reserves and holds", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 1000 });
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 7000, null);
    // 900 tokens and up to 3300 micro-units each: twice over the TPM together, within the balance.
    const first = await s.gate.admit({ ...s.admission("req_resumed_1", 100, 800), resumed: true });
    const second = await s.gate.admit({ ...s.admission("req_resumed_2", 100, 800), resumed: true });
    // The holds count: 400 of 7000 left, so a fresh request's 410 is refused.
    const meta = await s.enter();
    await expect(s.gate.admit(s.admission(meta.id, 10, 100))).rejects.toMatchObject({ status: 402 });
    first.release(null);
    second.release(null);
    expect((await s.limiter.peek(`team:${s.team.id}:tpm`, 1000)).remaining).toBe(1000);
  });

  test("a limiter that fails at admission leaves no billing hold behind", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 100_000 });
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    const take = s.limiter.take.bind(s.limiter);
    s.limiter.take = (k: string, l: number, a: number) => (k.endsWith(":tpm") ? Promise.reject(new Error("store unreachable")) : take(k, l, a));
    const meta = await s.enter();
    // Worst case 100 + 200 × 4 = 900 micro-units, held before the take failed.
    await expect(s.gate.admit(s.admission(meta.id, 100, 200))).rejects.toThrow("store unreachable");
    s.limiter.take = take;
    const again = await s.enter();
    (await s.gate.admit(s.admission(again.id, 100, 200))).release(null);
  });
});

describe("Gate, a job recovered after a restart (admitted without the edge)", () => {
  const resumed = (s: Awaited<ReturnType<typeof setup>>, inputTokens = 10, maxOutputTokens = 100) => {
    const a = s.admission(`req_${crypto.randomUUID()}`, inputTokens, maxOutputTokens);
    return s.gate.admit({ ...a, scope: { ...a.scope, endpoint: "responses" }, resumed: true });
  };

  test("runs when nothing changed since it was accepted", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    (await resumed(s)).release(null);
  });

  test("a key revoked since is refused (401)", async () => {
    const s = await setup();
    await revokeKey(s.db, s.key.id);
    await expect(resumed(s)).rejects.toMatchObject({ status: 401, code: "invalid_api_key", message: "The API key this request was made with is no longer active." });
  });

  test("a key or team restricted since, to other models or endpoint families, is refused (403)", async () => {
    const s = await setup();
    await restrictKey(s.db, s.key.id, { models: ["another-model"] });
    await expect(resumed(s)).rejects.toMatchObject({ status: 403, message: "This API key may not use the model 'gate-model-v1'." });
    await restrictKey(s.db, s.key.id, { models: null });
    await updateTeam(s.db, s.team.id, { allowedEndpoints: ["chat"] });
    await expect(resumed(s)).rejects.toMatchObject({ status: 403, message: "Your team may not use the responses endpoints." });
  });

  test("a lapsed account, or a balance spent since, is refused (402)", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    await setLapsed(s.db, s.team.id, true);
    await expect(resumed(s)).rejects.toMatchObject({ status: 402, message: expect.stringContaining("has lapsed") });
    await setLapsed(s.db, s.team.id, false);
    // Up to 10 × 1 + 300 × 4 = 1210 micro-units: more than the 1000 left.
    await expect(resumed(s, 10, 300)).rejects.toMatchObject({ status: 402, message: expect.stringContaining("balance cannot cover") });
  });
});

test("access/ takes plain data: no file in it imports the HTTP layer", () => {
  const dir = join(import.meta.dir, "../../../src/access");
  const offenders = readdirSync(dir).filter((f) => /from "\.\.\/http\//.test(readFileSync(join(dir, f), "utf8")));
  expect(offenders).toEqual([]);
});

describe("service tiers at admission", () => {
  test("priority is refused (403, nothing counted or held) until the operator grants it", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 1000 });
    const m = await s.enter();
    await expect(s.admit(m.id, "priority")).rejects.toMatchObject({ status: 403, type: "permission_error", code: "service_tier_not_allowed", param: "service_tier" });
    expect(await s.left("tpm", 1000)).toBe(1000);
    await updateTeam(s.db, s.team.id, { serviceTiers: ["default", "priority"] });
    const n = await s.enter();
    const ticket = await s.admit(n.id, "priority");
    expect(ticket.priceFactorMilli).toBe(2000);
    // Priority is interactive work: it counts in the team's own buckets.
    expect(await s.left("tpm", 1000)).toBe(890);
    // Granting priority without flex takes flex away.
    await expect(s.admit((await s.enter()).id, "flex")).rejects.toMatchObject({ status: 403, message: expect.stringContaining("'flex'") });
  });

  test("TPM: batch work fills its own bucket; interactive work still fits, and the other way round", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tpmLimit: 200 });
    await s.admit("req_line_1", "batch", 50, 100);
    await expect(s.admit("req_line_2", "batch", 50, 100)).rejects.toMatchObject({ status: 429, message: expect.stringContaining("flex and batch tokens per minute") });
    expect(await s.left("bulk:tpm", 200)).toBe(50);
    const m = await s.enter();
    await s.admit(m.id, undefined, 50, 100);
    expect(m.rateLimit.tokens!.remaining).toBe(50);
    const n = await s.enter();
    const refused = await s.admit(n.id, "default", 50, 100).catch((e) => e);
    expect(refused).toMatchObject({ status: 429 });
    expect(refused.message).not.toContain("flex and batch");
  });

  test("RPM: a flex request moves the request the edge took into the bulk lane, whose headers it then reports", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { rpmLimit: 2 });
    const flex = await s.enter();
    expect(await s.left("rpm", 2)).toBe(1);
    await s.admit(flex.id, "flex");
    expect(await s.left("rpm", 2)).toBe(2);
    expect(await s.left("bulk:rpm", 2)).toBe(1);
    expect(flex.rateLimit.requests).toMatchObject({ limit: 2, remaining: 1 });
    // A batch line (no edge) takes the bulk lane's last request; the next is refused there, not in the interactive lane.
    await s.admit("req_line_a", "batch");
    await expect(s.admit("req_line_b", "batch")).rejects.toMatchObject({ status: 429, message: expect.stringContaining("flex and batch requests per minute") });
    await s.enter();
    await s.enter();
    await expect(s.enter()).rejects.toMatchObject({ status: 429 });
  });

  test("a refused bulk request gives back the bulk request it took", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { rpmLimit: 5, tpmLimit: 100 });
    const m = await s.enter();
    await expect(s.admit(m.id, "flex", 50, 100)).rejects.toMatchObject({ status: 429 });
    expect(await s.left("bulk:rpm", 5)).toBe(5);
    expect(await s.left("rpm", 5)).toBe(5);
  });

  test("billing: the hold is the worst case at the tier's factor, so a balance too small at list price covers a batch run", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    // Worst case 10 × 1 + 100 × 4 = 410 at list price; 205 at batch's half price.
    await credit(s.db, s.team.id, 300, null);
    await expect(s.admit((await s.enter()).id, undefined)).rejects.toMatchObject({ status: 402, message: expect.stringContaining("may cost up to 0.00041") });
    const batch = await s.admit("req_line", "batch");
    expect(batch.priceFactorMilli).toBe(500);
    await expect(s.admit("req_line_2", "flex")).rejects.toMatchObject({ status: 402, message: expect.stringContaining("may cost up to 0.000205") });
    batch.release(null);
    expect((await s.admit("req_line_3", "flex")).priceFactorMilli).toBe(500);
  });

  test("a team's own price for a tier is the one held and charged", async () => {
    const s = await setup();
    await updateTeam(s.db, s.team.id, { tierPrices: { batch: 250, default: 800 } });
    expect((await s.admit("req_line", "batch")).priceFactorMilli).toBe(250);
    expect((await s.admit((await s.enter()).id, undefined)).priceFactorMilli).toBe(800);
    expect((await s.admit("req_flex", "flex")).priceFactorMilli).toBe(500);
  });
});
