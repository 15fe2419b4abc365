// Settling a finished request: its usage row and, for a billed team, its ledger charge, in one transaction. A write
// the database refuses (busy, disk full) is retried briefly and then kept in the settlement journal, which the next
// settlement the database takes replays (or else the next start), so no request goes unrecorded or unbilled; /metrics
// counts the failures and the replays.
import { existsSync } from "node:fs";
import { eq } from "drizzle-orm";
import { chargeUsage } from "../db/billing-repo.ts";
import { type Db, localDirOf } from "../db/client.ts";
import { usage } from "../db/schema.ts";
import { recordUsage } from "../db/usage-repo.ts";
import type { Logger } from "../log/logger.ts";
import { appendSettlement, journalPathFor, readJournal, rewriteJournal, type SettlementRecord } from "./settlement-journal.ts";

/** Waits before each retry of a failed write: about half a second in all, spent off the event loop. */
export const RETRY_DELAYS_MS = [25, 100, 400];

export interface SettlementCounters {
  /** A settlement the database would not take after every retry; `journaled`: it is in the journal, to be replayed. */
  settlementFailed(journaled: boolean): void;
  /** Journaled settlements written to the database by a replay. */
  settlementsReplayed(n: number): void;
}

export interface SettleDeps {
  db: Db;
  logger: Logger;
  metrics?: SettlementCounters;
}

/**
 * Writes the usage row and its charge, unless a row with the same request id exists (a journal replayed again after
 * a crash mid-replay): true when written.
 */
export function recordSettlement(db: Db, r: SettlementRecord): boolean {
  return db.transaction((tx) => {
    if (tx.select({ id: usage.id }).from(usage).where(eq(usage.requestId, r.requestId)).get()) return false;
    recordUsage(tx, r);
    chargeUsage(tx, r.teamId, r.requestId, r.costMicros);
    return true;
  });
}

/** Settles one request; never throws (the answer, or the real error, the client is owed comes first). */
export async function settle(deps: SettleDeps, r: SettlementRecord, delaysMs: readonly number[] = RETRY_DELAYS_MS): Promise<void> {
  let error: unknown;
  for (let attempt = 0; ; attempt++) {
    let written = false;
    try {
      recordSettlement(deps.db, r);
      written = true;
    } catch (e) {
      error = e;
    }
    if (written) return replayAfterRecovery(deps);
    if (attempt >= delaysMs.length) break;
    await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
  }
  const path = journalPathFor(localDirOf(deps.db));
  try {
    if (!path) throw new Error("an in-memory database has no journal");
    appendSettlement(path, r);
    deps.metrics?.settlementFailed(true);
    deps.logger.error("usage not recorded; kept in the settlement journal until the database takes it", { request_id: r.requestId, error: String(error) });
  } catch (e) {
    // The last resort: the whole settlement in the log, for the operator to enter by hand.
    deps.metrics?.settlementFailed(false);
    deps.logger.error("usage not recorded and not journaled", { request_id: r.requestId, error: String(error), journal_error: String(e), settlement: r });
  }
}

export interface ReplayReport {
  /** Written to the database now. */
  replayed: number;
  /** Already there (a replay interrupted after its writes and before the journal was emptied). */
  alreadyRecorded: number;
  /** The database refused them again: they stay in the journal for the next replay. */
  kept: number;
  /** Lines that are not settlements (one torn by a crash while it was written): logged and dropped. */
  unreadable: number;
}

/**
 * Writes the journal's settlements into the database and empties it, in one synchronous step (no settlement is
 * journaled meanwhile): at start-up, before any request, and after a settlement the database took again.
 */
export function replaySettlements(db: Db, logger: Logger): ReplayReport {
  const report: ReplayReport = { replayed: 0, alreadyRecorded: 0, kept: 0, unreadable: 0 };
  const path = journalPathFor(localDirOf(db));
  if (!path) return report;
  const { records, unreadable } = readJournal(path);
  if (!records.length && !unreadable.length) return report;
  for (const line of unreadable) logger.error("settlement journal line unreadable; dropped", { line: line.slice(0, 2000) });
  const kept: SettlementRecord[] = [];
  for (const r of records) {
    try {
      if (recordSettlement(db, r)) report.replayed++;
      else report.alreadyRecorded++;
    } catch (e) {
      kept.push(r);
      logger.error("journaled settlement not replayed; kept for the next replay", { request_id: r.requestId, error: String(e) });
    }
  }
  rewriteJournal(path, kept);
  report.kept = kept.length;
  report.unreadable = unreadable.length;
  return report;
}

/** After a replay that kept settlements (the database refuses those again), the next one waits this long. */
export const REPLAY_RETRY_MS = 30_000;
/** When a journal whose last replay kept settlements may be replayed again, by journal path. */
const retryAt = new Map<string, number>();

/**
 * The database just took a settlement, so it takes writes again: a journal left by earlier refusals is replayed now,
 * not at the next start (billing holds count it until then). A journal that does not exist costs one stat.
 */
function replayAfterRecovery(deps: SettleDeps): void {
  const path = journalPathFor(localDirOf(deps.db));
  if (!path || !existsSync(path) || performance.now() < (retryAt.get(path) ?? 0)) return;
  let report: ReplayReport;
  try {
    report = replaySettlements(deps.db, deps.logger);
  } catch (e) {
    // The journal could not be read or rewritten: it stays as it is (a replay is idempotent), and holds still count it.
    retryAt.set(path, performance.now() + REPLAY_RETRY_MS);
    deps.logger.error("settlement journal not replayed", { error: String(e) });
    return;
  }
  if (report.kept) retryAt.set(path, performance.now() + REPLAY_RETRY_MS);
  else retryAt.delete(path);
  deps.metrics?.settlementsReplayed(report.replayed);
  deps.logger.info("settlement journal replayed", { ...report });
}
