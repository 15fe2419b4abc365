// Settling over a real database made to fail (a trigger that refuses the usage row, as a full disk would): retried,
// else journaled in the database's local directory (with Postgres, this replica's data dir) and counted; replayed into
// usage and ledger exactly once. On every dialect.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { replaySettlements, settle, settlementsDone } from "../../../src/billing/settle.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { journalPathFor, readJournal, type SettlementRecord } from "../../../src/billing/settlement-journal.ts";
import { credit, findAccount, ledgerOf, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { localDirOf } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const db = t.db;
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
  const balance = async () => (await findAccount(db, team.id))!.balanceMicros;
  /** The charges, oldest first. */
  const charges = async () => (await ledgerOf(db, team.id, 100)).filter((e) => e.kind === "charge").reverse();
  const usageRows = () => t.all<{ requestId: string; costMicros: number; createdAt: number }>(sql`SELECT request_id AS "requestId", cost_micros AS "costMicros", created_at AS "createdAt" FROM usage ORDER BY id`);
  return { ...t, team, logger, failed, replayed, record, balance, charges, usageRows, deps: { db, logger, metrics: { settlementFailed: (j: boolean) => void failed.push(j), settlementsReplayed: (n: number) => void replayed.push(n) } } };
}

describe.each(DIALECTS)("settle ($name)", (dialect) => {
  test("writes the row with its charge, in one transaction, keeping the request's time; a second one for the same request is skipped", async () => {
    const s = await setup(dialect);
    expect(await recordSettlement(s.db, s.record("req_a"))).toBe(true);
    expect(await recordSettlement(s.db, s.record("req_a"))).toBe(false);
    expect((await s.usageRows()).map((r) => [r.requestId, r.costMicros, r.createdAt])).toEqual([["req_a", 30, 1_767_225_600]]);
    expect((await s.charges()).map((c) => c.amountMicros)).toEqual([-30]);
    expect(await s.balance()).toBe(970);
  });

  test("a refusal that clears within the retries is written, with no journal and nothing counted", async () => {
    const s = await setup(dialect);
    const restore = await s.failInserts("usage");
    // The disk frees up while the first retry waits.
    setTimeout(() => void restore(), 0);
    await settle(s.deps, s.record("req_b"), [50, 50]);
    expect(await s.usageRows()).toHaveLength(1);
    expect(s.failed).toEqual([]);
    expect(existsSync(journalPathFor(localDirOf(s.db))!)).toBe(false);
  });

  test("settlementsDone waits for a settlement between its retries (a shutdown must not close the database under it), only for its own database's", async () => {
    const s = await setup(dialect);
    await s.failInserts("usage");
    let ended = false;
    void settle(s.deps, s.record("req_w"), [150, 150]).then(() => (ended = true));
    await settlementsDone(s.db);
    expect(ended).toBe(true);
    expect(readJournal(journalPathFor(localDirOf(s.db))!).records.map((r) => r.requestId)).toEqual(["req_w"]);
    // Nothing under way (this database now, another never): resolved before a settlement that is still waiting ends.
    let later = false;
    const pending = settle(s.deps, s.record("req_x"), [150]).then(() => (later = true));
    await settlementsDone({});
    expect(later).toBe(false);
    await pending;
  });

  test("a refusal that outlasts the retries is journaled and counted; the next start replays it into usage and ledger exactly once", async () => {
    const s = await setup(dialect);
    const restore = await s.failInserts("usage");
    await settle(s.deps, s.record("req_c"), [1, 1]);
    await settle(s.deps, s.record("req_d"), [1, 1]);
    expect(s.failed).toEqual([true, true]);
    expect(await s.usageRows()).toEqual([]);
    expect(await s.balance()).toBe(1000);
    const path = journalPathFor(localDirOf(s.db))!;
    expect(readJournal(path).records.map((r) => r.requestId)).toEqual(["req_c", "req_d"]);
    expect(s.logger.lines.find((l) => l.msg === "usage not recorded; kept in the settlement journal until the database takes it")).toMatchObject({ request_id: "req_c" });

    // Still refused at the next start: kept for the one after.
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 0, alreadyRecorded: 0, kept: 2, unreadable: 0 });
    expect(readJournal(path).records).toHaveLength(2);

    await restore();
    // A replay interrupted after writing req_c (and a line torn by a crash) must not charge req_c twice.
    await recordSettlement(s.db, s.record("req_c"));
    appendFileSync(path, '{"requestId":"req_to');
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 1, alreadyRecorded: 1, kept: 0, unreadable: 1 });
    expect(existsSync(path)).toBe(false);
    expect(await replaySettlements(s.db, s.logger)).toEqual({ replayed: 0, alreadyRecorded: 0, kept: 0, unreadable: 0 });
    expect((await s.usageRows()).map((r) => r.requestId).sort()).toEqual(["req_c", "req_d"]);
    expect((await s.charges()).map((c) => [c.requestId, c.amountMicros])).toEqual([["req_c", -30], ["req_d", -30]]);
    expect(await s.balance()).toBe(940);
  });

  test("the first settlement the database takes again replays the journal in this process, no restart needed", async () => {
    const s = await setup(dialect);
    const restore = await s.failInserts("usage");
    await settle(s.deps, s.record("req_c"), [1]);
    await settle(s.deps, s.record("req_d"), [1]);
    const path = journalPathFor(localDirOf(s.db))!;
    expect(readJournal(path).records.map((r) => r.requestId)).toEqual(["req_c", "req_d"]);
    expect(await s.balance()).toBe(1000);

    // The disk has room again: the next request's settlement goes through, and the journal's with it.
    await restore();
    await settle(s.deps, s.record("req_e"), [1]);
    expect(existsSync(path)).toBe(false);
    expect((await s.usageRows()).map((r) => r.requestId).sort()).toEqual(["req_c", "req_d", "req_e"]);
    expect((await s.charges()).map((c) => [c.requestId, c.amountMicros])).toEqual([["req_e", -30], ["req_c", -30], ["req_d", -30]]);
    expect(await s.balance()).toBe(910);
    expect([s.failed, s.replayed]).toEqual([[true, true], [2]]);
    expect(s.logger.lines.find((l) => l.msg === "settlement journal replayed")).toMatchObject({ replayed: 2, alreadyRecorded: 0, kept: 0, unreadable: 0 });
    // Nothing left to replay: later settlements only write their own.
    await settle(s.deps, s.record("req_f"), [1]);
    expect(s.replayed).toEqual([2]);
  });

  test("when the journal cannot be written either, the whole settlement goes to the log and is counted as not journaled", async () => {
    const s = await setup(dialect);
    await s.failInserts("usage");
    // A directory where the journal file should be: the append fails as it would on a full or read-only disk.
    mkdirSync(journalPathFor(localDirOf(s.db))!);
    await settle(s.deps, s.record("req_e"), []);
    expect(s.failed).toEqual([false]);
    expect(s.logger.lines.find((l) => l.msg === "usage not recorded and not journaled")).toMatchObject({ request_id: "req_e", settlement: { requestId: "req_e", costMicros: 30 } });
  });

  test("a settlement journaled while a replay runs waits for it, so the replay's rewrite does not lose it", async () => {
    const s = await setup(dialect);
    await s.failInserts("usage");
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
