// Admission against a real kiln (HTTP on a port, worker threads, the tiny model): RPM under 64 racing requests,
// TPM counting real tokens, billing's 402 before any work and the ledger against the usage rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { credit, setBillingEnabled, setLapsed } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { billingAccounts, ledger, usage } from "../../src/db/schema.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

/** A fresh team with one key, so each test has its own limits, balance and usage rows. */
async function team(name: string) {
  const t = await createTeam(server.deps.db, name);
  return { id: t.id, key: (await createKey(server.deps.db, t.id, "k")).key };
}

function post(path: string, key: string, body: unknown) {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

const chatBody = (content: string, maxTokens = 16, extra: object = {}) => ({
  model: server.modelId, messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0, ...extra,
});

describe("rate limits on a real server", () => {
  test("64 concurrent requests against a limit of 10 admit exactly 10", async () => {
    const t = await team("racers");
    await updateTeam(server.deps.db, t.id, { rpmLimit: 10 });
    const answers = await Promise.all(Array.from({ length: 64 }, () => post("/v1/chat/completions", t.key, chatBody("Hi", 4))));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(54);
    for (const r of ok) expect(((await r.json()) as any).object).toBe("chat.completion");
    for (const r of refused) expect(Number(r.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    // Exactly the admitted ones ran: one usage row each.
    expect(sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).all()).toHaveLength(10);
  }, 60_000);

  test("TPM counts real tokens: one large request exhausts it, and the 429 says how long until the next fits", async () => {
    const t = await team("tokens");
    const big = "The quick brown fox jumps over the lazy dog. ".repeat(90);
    // The prompt's real size, measured by an unlimited team.
    const probe = ((await (await post("/v1/chat/completions", server.key, chatBody(big, 1))).json()) as any).usage.prompt_tokens as number;
    const tpm = probe + 16 + 100;
    await updateTeam(server.deps.db, t.id, { tpmLimit: tpm });
    const first = await post("/v1/chat/completions", t.key, chatBody(big, 16));
    expect(first.status).toBe(200);
    const used = ((await first.json()) as any).usage;
    expect(used.prompt_tokens).toBe(probe);
    // The answer's headers show the reservation (input + max output) taken off the budget.
    const remainingAfter = Number(first.headers.get("x-ratelimit-remaining-tokens"));
    expect(remainingAfter).toBeLessThanOrEqual(tpm - used.prompt_tokens - 16 + 50);
    expect(first.headers.get("x-ratelimit-limit-tokens")).toBe(String(tpm));

    // A second, smaller request does not fit in what is left.
    const second = await post("/v1/chat/completions", t.key, chatBody(big.slice(0, 1200), 16));
    expect(second.status).toBe(429);
    const body = (await second.json()) as any;
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(body.error.message).toContain("tokens per minute (TPM)");
    const waitMs = Number(second.headers.get("retry-after-ms"));
    // The budget refills tpm/60 tokens a second: a wait of seconds, up to a minute.
    expect(waitMs).toBeGreaterThan(1000);
    expect(waitMs).toBeLessThanOrEqual(60_000);
    expect(second.headers.get("retry-after")).toBe(String(Math.ceil(waitMs / 1000)));

    // One request larger than the whole budget can never fit: no retry headers, and clients are told not to retry.
    const huge = await post("/v1/chat/completions", t.key, chatBody(big + big, 16));
    expect(huge.status).toBe(429);
    expect(huge.headers.get("retry-after")).toBeNull();
    expect(huge.headers.get("x-should-retry")).toBe("false");
    expect(((await huge.json()) as any).error.message).toStartWith("Request too large");
  }, 60_000);

  test("the unused part of a reservation is given back when the request ends", async () => {
    const t = await team("refunds");
    await updateTeam(server.deps.db, t.id, { tpmLimit: 100_000 });
    const r = await post("/v1/chat/completions", t.key, chatBody("Hi", 2000, { stop: [" ", "e", "a", "o"] }));
    expect(r.status).toBe(200);
    const u = ((await r.json()) as any).usage;
    expect(u.completion_tokens).toBeLessThan(2000);
    // Reserved prompt + 2000 at admission; afterwards only what was used is gone (plus refill while it ran).
    expect(Number(r.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(100_000 - u.prompt_tokens - 2000 + 100);
    // The reservation is given back in the same step that writes the request's usage row.
    await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).get(), { what: "the usage row of the refund request" });
    const next = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${t.key}` } });
    expect(Number(next.headers.get("x-ratelimit-remaining-tokens"))).toBeGreaterThanOrEqual(100_000 - u.prompt_tokens - u.completion_tokens);
  }, 60_000);
});

describe("headers of streamed answers", () => {
  test("a stream's headers carry the team's state after its admission, in every format", async () => {
    const t = await team("streamers");
    await updateTeam(server.deps.db, t.id, { rpmLimit: 10, tpmLimit: 50_000 });
    const answers = [
      await post("/v1/chat/completions", t.key, chatBody("Hi", 64, { stream: true })),
      await post("/v1/messages", t.key, { model: server.modelId, max_tokens: 64, stream: true, messages: [{ role: "user", content: "Hi" }] }),
      await post("/v1/responses", t.key, { model: server.modelId, input: "Hi", max_output_tokens: 64, stream: true }),
    ];
    for (const [i, r] of answers.entries()) {
      expect(r.headers.get("content-type")).toContain("text/event-stream");
      expect(r.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(r.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - i));
      // At least the 64 reserved output tokens are off the budget when the stream starts.
      expect(Number(r.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(50_000 - 64);
      expect(r.headers.get("x-ratelimit-reset-tokens")).toMatch(/^\d+(ms|(\.\d+)?s)$/);
      await r.text();
    }
  }, 60_000);
});

describe("billing on a real server", () => {
  test("zero balance: 402 before any token is generated; crediting makes the same request pass; the ledger matches the usage rows", async () => {
    const t = await team("payers");
    await setBillingEnabled(server.deps.db, t.id, true);
    const body = chatBody("Tell me a story", 16);
    const refused = await post("/v1/chat/completions", t.key, body);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as any).error).toMatchObject({ type: "billing_error", code: "billing_not_configured", param: null });
    // Nothing ran: a request that reached the scheduler always leaves a usage row.
    expect(sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).all()).toEqual([]);

    await credit(server.deps.db, t.id, 10_000, "test credit");
    const passed = await post("/v1/chat/completions", t.key, body);
    expect(passed.status).toBe(200);
    // More traffic in every format, streamed and not.
    const stream = await post("/v1/chat/completions", t.key, { ...body, stream: true });
    await stream.text();
    await (await post("/v1/messages", t.key, { model: server.modelId, max_tokens: 12, messages: [{ role: "user", content: "Hello" }] })).json();
    await (await post("/v1/responses", t.key, { model: server.modelId, input: "Hello", max_output_tokens: 16, stream: true })).text();
    // A stream's usage row is written when its run settles, which may be after the client read the last byte.
    const rows = await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).all(), { what: "the 4 usage rows of the payers", until: (r) => r.length >= 4 });
    const charges = sqliteOf(server.deps.db).select().from(ledger).where(eq(ledger.teamId, t.id)).all().filter((e) => e.kind === "charge");
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.costMicros > 0)).toBe(true);
    expect(charges.map((c) => [c.requestId, -c.amountMicros]).sort()).toEqual(rows.map((r) => [r.requestId, r.costMicros]).sort());
    const balance = sqliteOf(server.deps.db).select().from(billingAccounts).where(eq(billingAccounts.teamId, t.id)).get()!.balanceMicros;
    expect(balance).toBe(10_000 - rows.reduce((s, r) => s + r.costMicros, 0));
  }, 60_000);

  test("the worst case must fit: a balance for a short answer refuses a long max_tokens, which a smaller one passes", async () => {
    const t = await team("careful");
    await setBillingEnabled(server.deps.db, t.id, true);
    // The tiny model bills 0.1 and 0.4 micro-units per input and output token.
    await credit(server.deps.db, t.id, 30, null);
    const long = await post("/v1/chat/completions", t.key, chatBody("Hi", 1000));
    expect(long.status).toBe(402);
    expect(((await long.json()) as any).error.message).toMatch(/may cost up to 0\.0004\d\d \(\d+ input \+ up to 1000 output tokens of kiln-tiny-v1\), and 0\.00003 is available/);
    expect((await post("/v1/chat/completions", t.key, chatBody("Hi", 16))).status).toBe(200);
  }, 60_000);

  test("a lapsed or missing account: 402 on every keyed endpoint; billing off: free again", async () => {
    const t = await team("lapsed");
    await setBillingEnabled(server.deps.db, t.id, true);
    await credit(server.deps.db, t.id, 1_000_000, null);
    await setLapsed(server.deps.db, t.id, true);
    const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${t.key}` } });
    expect(models.status).toBe(402);
    expect(((await models.json()) as any).error.message).toContain("lapsed");
    await setLapsed(server.deps.db, t.id, false);
    expect((await post("/v1/chat/completions", t.key, chatBody("Hi", 4))).status).toBe(200);
    sqliteOf(server.deps.db).delete(ledger).where(eq(ledger.teamId, t.id)).run();
    sqliteOf(server.deps.db).delete(billingAccounts).where(eq(billingAccounts.teamId, t.id)).run();
    const missing = await post("/v1/chat/completions", t.key, chatBody("Hi", 4));
    expect(missing.status).toBe(402);
    expect(((await missing.json()) as any).error.message).toContain("no billing account");
    await setBillingEnabled(server.deps.db, t.id, false);
    expect((await post("/v1/chat/completions", t.key, chatBody("Hi", 4))).status).toBe(200);
  }, 60_000);
});
