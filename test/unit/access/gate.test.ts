import { describe, expect, test } from "bun:test";
import { Gate } from "../../../src/access/gate.ts";
import { authenticate } from "../../../src/auth/authenticate.ts";
import { credit, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { attachMeta } from "../../../src/http/request-meta.ts";
import { emptyUsage } from "../../../src/inference/blocks.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { MemoryRateLimiter } from "../../../src/ratelimit/limiter.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";

// 1 and 4 micro-units per input and output token.
const model: ModelEntry = {
  ...parseManifest(fakeManifest("gate-model-v1", { pricing: { input_per_million: 1, output_per_million: 4, per_image: null } }), ["fp32"]),
  dir: "/nowhere",
};

function setup() {
  const db = openDatabase(tempDir("kiln-gate-"));
  const team = createTeam(db, "t");
  const key = createKey(db, team.id, "k");
  let now = 5_000_000;
  const limiter = new MemoryRateLimiter(() => now);
  const gate = new Gate({ db, config: { tiers: [] }, limiter });
  /** One request through the edge part of the gate; returns its id (for admission) and its meta. */
  const enter = async () => {
    const meta = attachMeta(new Request("http://x/v1/chat/completions"));
    meta.auth = authenticate(db, new Headers({ authorization: `Bearer ${key.key}` }));
    await gate.enter(meta, "/v1/chat/completions");
    return meta;
  };
  const admission = (requestId: string, inputTokens: number, maxOutputTokens: number, choices = 1) => ({
    scope: { requestId, teamId: team.id, keyId: key.id, endpoint: "chat" }, model, inputTokens, maxOutputTokens, choices,
  });
  return { db, team, gate, limiter, enter, admission, tick: (ms: number) => void (now += ms) };
}

describe("Gate", () => {
  test("TPM: input + max output × choices reserved at admission; the rest given back at release", async () => {
    const s = setup();
    updateTeam(s.db, s.team.id, { tpmLimit: 1000 });
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
    const s = setup();
    setBillingEnabled(s.db, s.team.id, true);
    // Worst case of each: 10 × 1 + 100 × 4 = 410 micro-units; the balance covers two.
    credit(s.db, s.team.id, 900, null);
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

  test("a TPM refusal after the balance check releases the hold it placed", async () => {
    const s = setup();
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 410, null);
    updateTeam(s.db, s.team.id, { tpmLimit: 50 });
    const m = await s.enter();
    await expect(s.gate.admit(s.admission(m.id, 10, 100))).rejects.toMatchObject({ status: 429 });
    updateTeam(s.db, s.team.id, { tpmLimit: null });
    const n = await s.enter();
    await expect(s.gate.admit(s.admission(n.id, 10, 100))).resolves.toBeDefined();
  });

  test("a request admitted without passing the edge (a background job) is checked against its team as it is now", async () => {
    const s = setup();
    updateTeam(s.db, s.team.id, { tpmLimit: 100 });
    await expect(s.gate.admit(s.admission("req_background", 50, 60))).rejects.toMatchObject({ status: 429 });
    await expect(s.gate.admit(s.admission("req_background2", 50, 40))).resolves.toBeDefined();
  });

  test("RPM refusal carries the true wait; the limit's refill admits again after it", async () => {
    const s = setup();
    updateTeam(s.db, s.team.id, { rpmLimit: 2 });
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
    const s = setup();
    updateTeam(s.db, s.team.id, { rpmLimit: 2, tpmLimit: 10_000 });
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

  test("a resumed admission (a job acknowledged before a restart) is not refused, yet reserves and holds", async () => {
    const s = setup();
    updateTeam(s.db, s.team.id, { tpmLimit: 1000 });
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 100, null);
    // 900 tokens and up to 900 micro-units: over the balance, and twice over the TPM with the first one.
    const first = await s.gate.admit({ ...s.admission("req_resumed_1", 100, 800), resumed: true });
    const second = await s.gate.admit({ ...s.admission("req_resumed_2", 100, 800), resumed: true });
    // The bucket went into debt, so a fresh request waits for it.
    const meta = await s.enter();
    await expect(s.gate.admit(s.admission(meta.id, 10, 10))).rejects.toMatchObject({ status: 402 });
    first.release(null);
    second.release(null);
    expect((await s.limiter.peek(`team:${s.team.id}:tpm`, 1000)).remaining).toBe(1000);
  });

  test("a limiter that fails at admission leaves no billing hold behind", async () => {
    const s = setup();
    updateTeam(s.db, s.team.id, { tpmLimit: 100_000 });
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 1000, null);
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
