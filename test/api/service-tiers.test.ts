// Service tiers on a real kiln (HTTP on loopback, worker threads, the tiny model), each run put in its tier the way a
// batch line's runner does (CallContext.tier): a tier the team was not granted is the documented 403 before anything
// runs, the usage row and the ledger charge carry the tier at its price factor, /metrics counts by tier, and the
// bulk lane (flex, batch) has RPM and TPM buckets of its own, so neither lane's work locks the other out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { costMicros } from "../../src/billing/cost.ts";
import { teamsCommand } from "../../src/cli/admin.ts";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { billingAccounts, ledger, usage } from "../../src/db/schema.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import type { ApiError } from "../../src/errors/api-error.ts";
import { sqliteOf } from "../helpers/databases.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chatInTier } from "../helpers/tier-call.ts";
import { waitFor } from "../helpers/wait-for.ts";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

async function team(name: string, billed = false) {
  const t = await createTeam(server.deps.db, name);
  if (billed) {
    await setBillingEnabled(server.deps.db, t.id, true);
    await credit(server.deps.db, t.id, 1_000_000, null);
  }
  return { id: t.id, name, key: (await createKey(server.deps.db, t.id, "k")).key };
}

const chatBody = (content: string, maxTokens = 16) => ({ model: server.modelId, messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0 });
const http = (key: string, body: object) =>
  fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
const rowOf = async (requestId: string) =>
  (await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.requestId, requestId)).get(), { what: `the usage row of ${requestId}` }))!;
const chargeOf = (requestId: string) => sqliteOf(server.deps.db).select().from(ledger).where(eq(ledger.requestId, requestId)).get();
const refusal = (p: Promise<unknown>) => p.then(() => null, (e: ApiError) => ({ status: e.status, ...e.toBody().error }));
const big = "The quick brown fox jumps over the lazy dog. ".repeat(40);

describe("allowed tiers", () => {
  test("a team without priority asking for it: 403 service_tier_not_allowed, nothing run; after kiln teams set, it runs at twice the price", async () => {
    const t = await team("no-priority", true);
    const refused = await refusal(chatInTier(server.deps, t.key, "priority", chatBody("Hi")));
    expect(refused).toEqual({
      status: 403, type: "permission_error", code: "service_tier_not_allowed", param: "service_tier",
      message: "Your team may not use the 'priority' service tier; it may use default, flex, batch. The operator grants tiers per team.",
    });
    expect(sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).all()).toEqual([]);

    const lines: string[] = [];
    expect(await teamsCommand(server.deps.db, ["set", t.name, "--service-tiers", "default,flex,priority,batch"], (l) => void lines.push(l))).toBe(0);
    const { requestId, completion } = await chatInTier(server.deps, t.key, "priority", chatBody("Hi"));
    expect(completion.object).toBe("chat.completion");
    const row = await rowOf(requestId);
    expect([row.serviceTier, row.priceFactorMilli]).toEqual(["priority", 2000]);
    const pricing = server.deps.registry.list()[0]!.pricing;
    expect(row.costMicros).toBe(costMicros(pricing, row, 2000));
    expect(chargeOf(requestId)).toMatchObject({ amountMicros: -row.costMicros, note: "priority tier, ×2 price" });
  }, 60_000);
});

describe("usage rows and the ledger", () => {
  test("a batch-tier run: its row carries the tier, its charge is the discounted price and says so; a default one's says nothing", async () => {
    const t = await team("batch-payer", true);
    const { requestId } = await chatInTier(server.deps, t.key, "batch", chatBody(big));
    const res = await http(t.key, chatBody(big));
    expect(res.status).toBe(200);
    await res.json();
    const interactive = res.headers.get("x-request-id")!;
    const batchRow = await rowOf(requestId);
    const defaultRow = await rowOf(interactive);
    const pricing = server.deps.registry.list()[0]!.pricing;
    expect([batchRow.serviceTier, batchRow.priceFactorMilli]).toEqual(["batch", 500]);
    expect([defaultRow.serviceTier, defaultRow.priceFactorMilli]).toEqual(["default", 1000]);
    expect(batchRow.costMicros).toBe(costMicros(pricing, batchRow, 500));
    // Half of what the same tokens cost at list price (rounded once, so within a micro-unit).
    const full = costMicros(pricing, batchRow);
    expect(full).toBeGreaterThan(20);
    expect(Math.abs(batchRow.costMicros * 2 - full)).toBeLessThanOrEqual(1);
    expect(chargeOf(requestId)).toMatchObject({ kind: "charge", amountMicros: -batchRow.costMicros, note: "batch tier, ×0.5 price" });
    expect(chargeOf(interactive)).toMatchObject({ amountMicros: -defaultRow.costMicros, note: null });
    const balance = sqliteOf(server.deps.db).select().from(billingAccounts).where(eq(billingAccounts.teamId, t.id)).get()!.balanceMicros;
    expect(balance).toBe(1_000_000 - batchRow.costMicros - defaultRow.costMicros);

    const families = parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text());
    expect(sampleValue(families, "kiln_tier_completed_requests_total", { model: server.modelId, endpoint: "chat", tier: "batch" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, "kiln_tier_tokens_total", { model: server.modelId, tier: "batch", kind: "input" })).toBeGreaterThanOrEqual(batchRow.inputTokens);
  }, 60_000);
});

describe("separate limits for the bulk lane", () => {
  test("TPM: batch work that uses up the team's bulk budget leaves its interactive requests through, and the other way round", async () => {
    // The prompt's real size, measured by an unlimited team.
    const probe = (await chatInTier(server.deps, server.key, "default", chatBody(big, 1))).completion.usage.prompt_tokens;
    const tpm = probe + 16 + 100;
    const a = await team("batch-first");
    await updateTeam(server.deps.db, a.id, { tpmLimit: tpm });
    await chatInTier(server.deps, a.key, "batch", chatBody(big));
    const bulk429 = await refusal(chatInTier(server.deps, a.key, "batch", chatBody(big)));
    expect(bulk429).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(bulk429!.message).toContain(`flex and batch tokens per minute (TPM) of team 'batch-first': limit ${tpm}`);
    const through = await http(a.key, chatBody(big));
    expect(through.status).toBe(200);
    // The interactive answer's headers are the interactive bucket's: the batch work is not in them.
    expect(Number(through.headers.get("x-ratelimit-remaining-tokens"))).toBeGreaterThanOrEqual(tpm - probe - 16);
    expect((await http(a.key, chatBody(big))).status).toBe(429);

    const b = await team("interactive-first");
    await updateTeam(server.deps.db, b.id, { tpmLimit: tpm });
    expect((await http(b.key, chatBody(big))).status).toBe(200);
    expect((await http(b.key, chatBody(big))).status).toBe(429);
    expect((await chatInTier(server.deps, b.key, "flex", chatBody(big))).completion.object).toBe("chat.completion");
  }, 60_000);

  test("RPM: batch lines count in the bulk lane's own requests per minute, not the interactive one's", async () => {
    const t = await team("one-a-minute");
    await updateTeam(server.deps.db, t.id, { rpmLimit: 1 });
    expect((await http(t.key, chatBody("Hi", 4))).status).toBe(200);
    expect((await http(t.key, chatBody("Hi", 4))).status).toBe(429);
    await chatInTier(server.deps, t.key, "batch", chatBody("Hi", 4));
    const refused = await refusal(chatInTier(server.deps, t.key, "batch", chatBody("Hi", 4)));
    expect(refused).toMatchObject({ status: 429, message: expect.stringContaining("flex and batch requests per minute (RPM)") });
  }, 60_000);
});
