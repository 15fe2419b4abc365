// The gate where it meets background responses and refusals: a job acknowledged before a restart is not refused by a
// rate limit, is refused when its key, permissions or account changed since, and is billed for the run that did the
// work only; refusals at the edge carry the rate-limit headers.
import { expect, test } from "bun:test";
import { dirname } from "node:path";
import { eq } from "drizzle-orm";
import { startKiln } from "../../src/cli/serve.ts";
import { openDatabase } from "../../src/db/client.ts";
import { loadConfig } from "../../src/config.ts";
import { credit, setBillingEnabled, setLapsed } from "../../src/db/billing-repo.ts";
import { createKey, restrictKey, revokeKey } from "../../src/db/keys-repo.ts";
import type { Db } from "../../src/db/client.ts";
import { billingAccounts, ledger, responses, usage } from "../../src/db/schema.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer } from "../helpers/server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

async function twoLives() {
  const dataDir = tempDir();
  const modelsDir = dirname(await tinyModelDir());
  const config = () => loadConfig({ KILN_DATA_DIR: dataDir, KILN_MODELS_DIR: modelsDir, KILN_PORT: "0", KILN_THREADS: "1" }, []);
  let printed = "";
  const first = await startKiln(config(), { logger: memoryLogger(), print: (t) => (printed += t), buildDefaultModel: false });
  const admin = printed.match(/LLM\|\d+\|[A-Za-z0-9]+/)![0];
  const model = first.deps.registry.list()[0]!.id;
  const post = async (key: string, body: unknown) => {
    const r = await fetch(`${first.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as { id: string; status: string }, requestId: r.headers.get("x-request-id") ?? "" };
  };
  // 16 long jobs fill the tiny model's batch, so what comes after them waits in the queue.
  const fill = async () => {
    for (let i = 0; i < 16; i++) await post(admin, { model, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true });
  };
  const restart = () => startKiln(config(), { logger: memoryLogger(), print: () => {}, buildDefaultModel: false });
  return { first, model, post, fill, restart, dataDir };
}

/** A forced call to a function without arguments: the tiny model rarely stops on its own, this ends in a few tokens. */
const SHORT = { tools: [{ type: "function", name: "done", parameters: { type: "object", properties: {}, additionalProperties: false } }], tool_choice: "required" };

/** The stored response once it has ended (not queued or in progress). */
const ended = (db: Db, id: string) =>
  waitFor(() => sqliteOf(db).select().from(responses).where(eq(responses.id, id)).get()!, {
    what: `response ${id} to end`, until: (row) => !/^(queued|in_progress)$/.test(row.status), timeoutMs: 90_000, intervalMs: 20,
  });

test("jobs acknowledged under a team's TPM are all run after a restart, not refused by a limiter that starts empty", async () => {
  const k = await twoLives();
  const team = await createTeam(k.first.deps.db, "limited");
  await updateTeam(k.first.deps.db, team.id, { tpmLimit: 4000 });
  const key = (await createKey(k.first.deps.db, team.id, "k")).key;
  await k.fill();
  const a = await k.post(key, { model: k.model, input: "Say A", max_output_tokens: 2000, background: true, ...SHORT });
  // Together they pass the TPM: the second is accepted once the bucket has refilled enough (a 429 takes nothing).
  const b = await waitFor(() => k.post(key, { model: k.model, input: "Say B", max_output_tokens: 2000, background: true, ...SHORT }), {
    what: "the second job accepted", until: (r) => r.status !== 429, timeoutMs: 60_000, intervalMs: 20,
  });
  expect([a.status, b.status, a.body.status, b.body.status]).toEqual([200, 200, "queued", "queued"]);
  await k.first.stop(300);
  const second = await k.restart();
  try {
    // The limiter starts empty after the restart and the two together are over the TPM: both run to their end all the same.
    for (const id of [a.body.id, b.body.id]) expect((await ended(second.deps.db, id)).status).toBe("completed");
  } finally {
    await second.stop(300);
  }
}, 120_000);

test("a job whose key was revoked or restricted, or whose account lapsed or was spent, since it was accepted ends failed with the refusal", async () => {
  const k = await twoLives();
  const db = k.first.deps.db;
  const team = async (name: string, billed = false) => {
    const t = await createTeam(db, name);
    if (billed) {
      await setBillingEnabled(db, t.id, true);
      await credit(db, t.id, 1_000_000, "start");
    }
    return { team: t, key: await createKey(db, t.id, "k") };
  };
  const cases = { unchanged: await team("unchanged", true), revoked: await team("revoked"), restricted: await team("restricted"), family: await team("family"), lapsed: await team("lapsed", true), spent: await team("spent", true) };
  await k.fill();
  const jobs: Record<string, string> = {};
  for (const [name, c] of Object.entries(cases)) {
    const r = await k.post(c.key.key, { model: k.model, input: "Say A", max_output_tokens: 2000, background: true, ...SHORT });
    expect([name, r.status, r.body.status]).toEqual([name, 200, "queued"]);
    jobs[name] = r.body.id;
  }
  await k.first.stop(300);
  // While kiln was down, the operator changed things: each job's refusal is what a new request would get now.
  const reopened = await openDatabase(k.dataDir);
  await revokeKey(reopened, cases.revoked.key.id);
  await restrictKey(reopened, cases.restricted.key.id, { models: ["another-model"] });
  await updateTeam(reopened, cases.family.team.id, { allowedEndpoints: ["chat"] });
  await setLapsed(reopened, cases.lapsed.team.id, true);
  sqliteOf(reopened).update(billingAccounts).set({ balanceMicros: 0 }).where(eq(billingAccounts.teamId, cases.spent.team.id)).run();
  sqliteOf(reopened).$client.close();
  const second = await k.restart();
  try {
    const outcome = async (name: string) => {
      const row = await ended(second.deps.db, jobs[name]!);
      return { status: row.status, error: (JSON.parse(row.responseJson) as { error: unknown }).error };
    };
    expect(await outcome("unchanged")).toEqual({ status: "completed", error: null });
    expect(await outcome("revoked")).toEqual({ status: "failed", error: { code: "invalid_api_key", message: "The API key this request was made with is no longer active." } });
    expect(await outcome("restricted")).toEqual({ status: "failed", error: { code: "permission_error", message: `This API key may not use the model '${k.model}'.` } });
    expect(await outcome("family")).toEqual({ status: "failed", error: { code: "permission_error", message: "Your team may not use the responses endpoints." } });
    expect(await outcome("lapsed")).toEqual({ status: "failed", error: { code: "billing_not_configured", message: expect.stringContaining("billing account has lapsed") } });
    expect(await outcome("spent")).toEqual({ status: "failed", error: { code: "billing_not_configured", message: expect.stringContaining("balance cannot cover this request") } });
    // A refused job ran nothing, so nothing was billed for it after the restart: the team's one usage row and one
    // charge are the first life's, whose run was drained from the queue before it reached a worker and cost nothing.
    const spent = cases.spent.team.id;
    const rows = sqliteOf(second.deps.db).select().from(usage).where(eq(usage.teamId, spent)).all();
    expect(rows.map((r) => [r.outputTokens, r.costMicros])).toEqual([[0, 0]]);
    const charged = sqliteOf(second.deps.db).select().from(ledger).where(eq(ledger.teamId, spent)).all().filter((e) => e.kind === "charge");
    expect(charged.map((e) => [e.requestId, e.amountMicros])).toEqual([[rows[0]!.requestId, 0]]);
    expect(sqliteOf(second.deps.db).select().from(billingAccounts).where(eq(billingAccounts.teamId, spent)).get()!.balanceMicros).toBe(0);
  } finally {
    await second.stop(300);
  }
}, 120_000);

test("a queued job drained by a shutdown and run after the restart is charged once, for the run that did the work", async () => {
  const k = await twoLives();
  const team = await createTeam(k.first.deps.db, "billed");
  await setBillingEnabled(k.first.deps.db, team.id, true);
  await credit(k.first.deps.db, team.id, 1_000_000, "start");
  const key = (await createKey(k.first.deps.db, team.id, "k")).key;
  await k.fill();
  const job = await k.post(key, { model: k.model, input: "Say A", max_output_tokens: 16, background: true });
  expect(job.body.status).toBe("queued");
  await k.first.stop(300);
  const second = await k.restart();
  try {
    await ended(second.deps.db, job.body.id);
    const rows = sqliteOf(second.deps.db).select().from(usage).where(eq(usage.teamId, team.id)).all();
    // The drained run never reached a worker and settled nothing; the re-run, under the job's own request id, bills
    // its real tokens: one row.
    expect(rows.map((r) => [r.requestId, r.inputTokens > 0, r.costMicros > 0])).toEqual([[job.requestId, true, true]]);
    const charged = sqliteOf(second.deps.db).select().from(ledger).where(eq(ledger.teamId, team.id)).all().filter((e) => e.kind === "charge");
    expect(charged.reduce((n, e) => n - e.amountMicros, 0)).toBe(rows[0]!.costMicros);
  } finally {
    await second.stop(300);
  }
}, 120_000);

test("a 403 or 402 at the edge carries the rate-limit headers like every keyed answer", async () => {
  const server = await startTestServer();
  try {
    const t = await createTeam(server.deps.db, "limited");
    await updateTeam(server.deps.db, t.id, { rpmLimit: 10, tpmLimit: 10_000, allowedEndpoints: ["chat"] });
    const h = { authorization: `Bearer ${(await createKey(server.deps.db, t.id, "k")).key}`, "content-type": "application/json" };
    const r403 = await fetch(`${server.url}/v1/messages`, { method: "POST", headers: h, body: JSON.stringify({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }) });
    expect(r403.status).toBe(403);
    expect(r403.headers.get("x-ratelimit-limit-requests")).toBe("10");
    expect(r403.headers.get("x-ratelimit-limit-tokens")).toBe("10000");
    await setBillingEnabled(server.deps.db, t.id, true);
    await credit(server.deps.db, t.id, 1000, null);
    await setLapsed(server.deps.db, t.id, true);
    const r402 = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: h, body: JSON.stringify({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }) });
    expect(r402.status).toBe(402);
    expect(r402.headers.get("x-ratelimit-limit-requests")).toBe("10");
  } finally {
    await server.stop(500);
  }
}, 60_000);
