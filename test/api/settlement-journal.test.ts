// A usage write the database refuses does not give free inference: the answer goes out, the settlement is journaled
// and counted in /metrics, its charge counts against the team's balance meanwhile, and the next settlement the
// database takes (or else the next start) writes it into usage and the ledger, exactly once.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { eq } from "drizzle-orm";
import { startKiln } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { costMicros } from "../../src/billing/cost.ts";
import { formatMicros } from "../../src/billing/money.ts";
import { journalPathFor } from "../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { localDirOf } from "../../src/db/client.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { billingAccounts, ledger, usage } from "../../src/db/schema.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { tempDir } from "../helpers/kiln.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

const FULL_DISK = "CREATE TRIGGER full_disk BEFORE INSERT ON usage BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END";

/** Starts kiln over `dataDir` with the tiny model (again, for a restart). */
async function kilnOver(dataDir: string) {
  const config = loadConfig({ KILN_DATA_DIR: dataDir, KILN_MODELS_DIR: dirname(await tinyModelDir()), KILN_PORT: "0", KILN_THREADS: "1" }, []);
  return startKiln(config, { logger: memoryLogger(), print: () => {}, buildDefaultModel: false });
}

const metric = async (url: string, name: string) => sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), name);

test("a refused settlement is journaled and counted, and replayed into usage and ledger once at the next start", async () => {
  const dataDir = tempDir();
  const life = () => kilnOver(dataDir);

  const first = await life();
  const db = first.deps.db;
  const team = await createTeam(db, "billed");
  await setBillingEnabled(db, team.id, true);
  await credit(db, team.id, 1_000_000, "start");
  const key = (await createKey(db, team.id, "k")).key;
  // The database now refuses every usage row, as a full disk would.
  sqliteOf(db).$client.run(FULL_DISK);
  const res = await fetch(`${first.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: first.deps.registry.list()[0]!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 5 }),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  const requestId = res.headers.get("x-request-id")!;
  // The settlement is written after the answer: wait for it to be counted.
  await waitFor(() => metric(first.url, "kiln_settlements_journaled_total"), { what: "the refused settlement journaled", until: (n) => n >= 1, timeoutMs: 30_000, intervalMs: 20 });
  expect(await metric(first.url, "kiln_settlement_failures_total")).toBe(1);
  expect(sqliteOf(db).select().from(usage).where(eq(usage.requestId, requestId)).all()).toEqual([]);
  await first.stop(300);

  // The disk has room again.
  const raw = new Database(join(dataDir, "kiln.db"));
  raw.run("DROP TRIGGER full_disk");
  raw.close();
  for (const [i, replayed] of [[0, 1], [1, 0]] as const) {
    const next = await life();
    try {
      expect([i, await metric(next.url, "kiln_settlements_replayed_total")]).toEqual([i, replayed]);
      const rows = sqliteOf(next.deps.db).select().from(usage).where(eq(usage.requestId, requestId)).all();
      expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([["completed", answer.usage.prompt_tokens, answer.usage.completion_tokens]]);
      const charges = sqliteOf(next.deps.db).select().from(ledger).where(eq(ledger.requestId, requestId)).all();
      expect(charges.map((c) => c.amountMicros)).toEqual([-rows[0]!.costMicros]);
      expect(rows[0]!.costMicros).toBeGreaterThan(0);
    } finally {
      await next.stop(300);
    }
  }
}, 120_000);

test("while a team's charge waits in the journal it cannot be spent again; the next settlement that goes through replays it, no restart", async () => {
  const kiln = await kilnOver(tempDir());
  try {
    const db = kiln.deps.db;
    const model = kiln.deps.registry.list()[0]!;
    const billed = await createTeam(db, "billed");
    await setBillingEnabled(db, billed.id, true);
    await credit(db, billed.id, 1_000_000, "start");
    const billedKey = (await createKey(db, billed.id, "k")).key;
    const otherKey = (await createKey(db, (await createTeam(db, "unbilled")).id, "k")).key;
    const chat = (key: string) =>
      fetch(`${kiln.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: model.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 5 }),
      });
    const balance = () => sqliteOf(db).select().from(billingAccounts).where(eq(billingAccounts.teamId, billed.id)).get()!.balanceMicros;

    sqliteOf(db).$client.run(FULL_DISK);
    const first = await chat(billedKey);
    expect(first.status).toBe(200);
    const used = ((await first.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    await waitFor(() => metric(kiln.url, "kiln_settlements_journaled_total"), { what: "the refused settlement journaled", until: (n) => n >= 1, timeoutMs: 30_000, intervalMs: 20 });
    const spent = costMicros(model.pricing, { inputTokens: used.prompt_tokens, outputTokens: used.completion_tokens });
    const worstCase = costMicros(model.pricing, { inputTokens: used.prompt_tokens, outputTokens: 5 });
    expect(spent).toBeGreaterThan(0);
    // The balance (the journaled charge is not in it) would cover the same request again, but not once that charge is counted.
    sqliteOf(db).update(billingAccounts).set({ balanceMicros: worstCase + spent - 1 }).where(eq(billingAccounts.teamId, billed.id)).run();
    const refusal = `and ${formatMicros(worstCase - 1)} is available`;
    const again = await chat(billedKey);
    expect([again.status, ((await again.json()) as { error: { message: string } }).error.message]).toEqual([402, expect.stringContaining(refusal)]);

    // The disk has room again: another team's request settles, and the journal goes into usage and the ledger with it.
    sqliteOf(db).$client.run("DROP TRIGGER full_disk");
    expect((await chat(otherKey)).status).toBe(200);
    await waitFor(() => metric(kiln.url, "kiln_settlements_replayed_total"), { what: "the journal replayed", until: (n) => n >= 1, timeoutMs: 30_000, intervalMs: 20 });
    expect(existsSync(journalPathFor(localDirOf(db))!)).toBe(false);
    const requestId = first.headers.get("x-request-id")!;
    expect(sqliteOf(db).select().from(usage).where(eq(usage.requestId, requestId)).all().map((r) => r.costMicros)).toEqual([spent]);
    expect(sqliteOf(db).select().from(ledger).where(eq(ledger.requestId, requestId)).all().map((c) => c.amountMicros)).toEqual([-spent]);
    expect(balance()).toBe(worstCase - 1);
    // Charged now, and no longer journaled: counted once, so the team stands where it stood.
    const still = await chat(billedKey);
    expect([still.status, ((await still.json()) as { error: { message: string } }).error.message]).toEqual([402, expect.stringContaining(refusal)]);
  } finally {
    await kiln.stop(300);
  }
}, 120_000);
