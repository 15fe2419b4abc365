// Settling over a real SQLite database made to fail (a trigger that refuses the usage row, as a full disk would):
// retried, else journaled and counted; replayed into usage and ledger exactly once.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { replaySettlements, settle } from "../../../src/billing/settle.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { journalPathFor, readJournal, type SettlementRecord } from "../../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { localDirOf, openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { billingAccounts, ledger, usage } from "../../../src/db/schema.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const FAIL = "CREATE TRIGGER full_disk BEFORE INSERT ON usage BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END";

async function setup() {
  const dir = tempDir("kiln-settle-");
  const db = await openDatabase(dir);
  const team = await createTeam(db, "billed");
  await setBillingEnabled(db, team.id, true);
  await credit(db, team.id, 1000, null);
  const key = await createKey(db, team.id, "k");
  const failed: boolean[] = [];
  const replayed: number[] = [];
  const logger = memoryLogger();
  const record = (requestId: string): SettlementRecord => ({
    requestId, teamId: team.id, keyId: key.id, model: "m-v1", endpoint: "chat", status: "completed",
    inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 30, createdAt: 1_767_225_600,
  });
  const balance = () => sqliteOf(db).select().from(billingAccounts).where(eq(billingAccounts.teamId, team.id)).get()!.balanceMicros;
  const charges = () => sqliteOf(db).select().from(ledger).where(eq(ledger.kind, "charge")).all();
  return { dir, db, team, logger, failed, replayed, record, balance, charges, deps: { db, logger, metrics: { settlementFailed: (j: boolean) => void failed.push(j), settlementsReplayed: (n: number) => void replayed.push(n) } } };
}

describe("settle", () => {
  test("writes the row with its charge, in one transaction, keeping the request's time; a second one for the same request is skipped", async () => {
    const s = await setup();
    expect(await recordSettlement(s.db, s.record("req_a"))).toBe(true);
    expect(await recordSettlement(s.db, s.record("req_a"))).toBe(false);
    expect(sqliteOf(s.db).select().from(usage).all().map((r) => [r.requestId, r.costMicros, r.createdAt])).toEqual([["req_a", 30, 1_767_225_600]]);
    expect(s.charges().map((c) => c.amountMicros)).toEqual([-30]);
    expect(s.balance()).toBe(970);
  });

  test("a refusal that clears within the retries is written, with no journal and nothing counted", async () => {
    const s = await setup();
    sqliteOf(s.db).$client.run(FAIL);
    // The disk frees up while the first retry waits.
    setTimeout(() => sqliteOf(s.db).$client.run("DROP TRIGGER full_disk"), 0);
    await settle(s.deps, s.record("req_b"), [50, 50]);
    expect(sqliteOf(s.db).select().from(usage).all()).toHaveLength(1);
    expect(s.failed).toEqual([]);
    expect(existsSync(journalPathFor(localDirOf(s.db))!)).toBe(false);
  });

  test("a refusal that outlasts the retries is journaled and counted; the next start replays it into usage and ledger exactly once", async () => {
    const s = await setup();
    sqliteOf(s.db).$client.run(FAIL);
    await settle(s.deps, s.record("req_c"), [1, 1]);
    await settle(s.deps, s.record("req_d"), [1, 1]);
    expect(s.failed).toEqual([true, true]);
    expect(sqliteOf(s.db).select().from(usage).all()).toEqual([]);
    expect(s.balance()).toBe(1000);
    const path = journalPathFor(localDirOf(s.db))!;
    expect(readJournal(path).records.map((r) => r.requestId)).toEqual(["req_c", "req_d"]);
    expect(s.logger.lines.find((l) => l.msg === "usage not recorded; kept in the settlement journal until the database takes it")).toMatchObject({ request_id: "req_c" });

    // Still refused at the next start: kept for the one after.
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 0, alreadyRecorded: 0, kept: 2, unreadable: 0 });
    expect(readJournal(path).records).toHaveLength(2);

    sqliteOf(s.db).$client.run("DROP TRIGGER full_disk");
    // A replay interrupted after writing req_c (and a line torn by a crash) must not charge req_c twice.
    await recordSettlement(s.db, s.record("req_c"));
    appendFileSync(path, '{"requestId":"req_to');
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 1, alreadyRecorded: 1, kept: 0, unreadable: 1 });
    expect(existsSync(path)).toBe(false);
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 0, alreadyRecorded: 0, kept: 0, unreadable: 0 });
    expect(sqliteOf(s.db).select().from(usage).all().map((r) => r.requestId).sort()).toEqual(["req_c", "req_d"]);
    expect(s.charges().map((c) => [c.requestId, c.amountMicros])).toEqual([["req_c", -30], ["req_d", -30]]);
    expect(s.balance()).toBe(940);
  });

  test("the first settlement the database takes again replays the journal in this process, no restart needed", async () => {
    const s = await setup();
    sqliteOf(s.db).$client.run(FAIL);
    await settle(s.deps, s.record("req_c"), [1]);
    await settle(s.deps, s.record("req_d"), [1]);
    const path = journalPathFor(localDirOf(s.db))!;
    expect(readJournal(path).records.map((r) => r.requestId)).toEqual(["req_c", "req_d"]);
    expect(s.balance()).toBe(1000);

    // The disk has room again: the next request's settlement goes through, and the journal's with it.
    sqliteOf(s.db).$client.run("DROP TRIGGER full_disk");
    await settle(s.deps, s.record("req_e"), [1]);
    expect(existsSync(path)).toBe(false);
    expect(sqliteOf(s.db).select().from(usage).all().map((r) => r.requestId).sort()).toEqual(["req_c", "req_d", "req_e"]);
    expect(s.charges().map((c) => [c.requestId, c.amountMicros])).toEqual([["req_e", -30], ["req_c", -30], ["req_d", -30]]);
    expect(s.balance()).toBe(910);
    expect([s.failed, s.replayed]).toEqual([[true, true], [2]]);
    expect(s.logger.lines.find((l) => l.msg === "settlement journal replayed")).toMatchObject({ replayed: 2, alreadyRecorded: 0, kept: 0, unreadable: 0 });
    // Nothing left to replay: later settlements only write their own.
    await settle(s.deps, s.record("req_f"), [1]);
    expect(s.replayed).toEqual([2]);
  });

  test("when the journal cannot be written either, the whole settlement goes to the log and is counted as not journaled", async () => {
    const s = await setup();
    sqliteOf(s.db).$client.run(FAIL);
    // A directory where the journal file should be: the append fails as it would on a full or read-only disk.
    mkdirSync(journalPathFor(localDirOf(s.db))!);
    await settle(s.deps, s.record("req_e"), []);
    expect(s.failed).toEqual([false]);
    expect(s.logger.lines.find((l) => l.msg === "usage not recorded and not journaled")).toMatchObject({ request_id: "req_e", settlement: { requestId: "req_e", costMicros: 30 } });
  });

  test("a settlement journaled while a replay runs waits for it, so the replay's rewrite does not lose it", async () => {
    const s = await setup();
    sqliteOf(s.db).$client.run(FAIL);
    await settle(s.deps, s.record("req_c"), []);
    await settle(s.deps, s.record("req_d"), []);
    const path = journalPathFor(localDirOf(s.db))!;
    // The replay reads the journal, is refused again for both and rewrites it; meanwhile another request fails to settle.
    const replay = replaySettlements(s.db, s.logger);
    const late = settle(s.deps, s.record("req_e"), []);
    expect(await replay).toEqual({ replayed: 0, alreadyRecorded: 0, kept: 2, unreadable: 0 });
    await late;
    expect(readJournal(path).records.map((r) => r.requestId)).toEqual(["req_c", "req_d", "req_e"]);
  });
});
