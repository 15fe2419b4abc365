// Settling a finished request: its usage row and, for a billed team, its ledger charge, in one transaction. A write
// the database refuses (busy, disk full) is retried briefly and then kept in the settlement journal, which the next
// settlement the database takes replays (or else the next start), so no request goes unrecorded or unbilled; /metrics
// counts the failures and the replays. With replicas sharing a store, journaled charges are announced there until their
// replay (journal-index.ts), so every replica's billing admission counts them.
import { existsSync } from "node:fs";
import { type Db, localDirOf } from "../db/client.ts";
import { recordSettlement } from "../db/settlement-repo.ts";
import type { Logger } from "../log/logger.ts";
import { journalIndexOf } from "./journal-index.ts";
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

/** The journal's last turn, by path: see inTurn. */
const turns = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` once every earlier append to or replay of the journal at `path` has finished. A replay reads the journal,
 * writes its settlements into the database (asynchronously) and rewrites it: a settlement appended in between would
 * be lost by the rewrite, so appends and replays take turns.
 */
function inTurn<T>(path: string, fn: () => T | Promise<T>): Promise<T> {
  const run = (turns.get(path) ?? Promise.resolve()).then(fn);
  const done = run.then(
    () => {},
    () => {},
  );
  turns.set(path, done);
  void done.then(() => {
    if (turns.get(path) === done) turns.delete(path);
  });
  return run;
}

/** Settlements under way (written, waiting between retries, or being journaled), by the database they go to. */
const inFlight = new WeakMap<object, Set<Promise<void>>>();

/**
 * Resolves once every settlement to `db` under way now has ended (written or journaled). A shutdown waits for it
 * before it closes the database: a request that has answered may still be waiting between retries, and a process that
 * exited then would lose its usage with no trace.
 */
export async function settlementsDone(db: object): Promise<void> {
  await Promise.all([...(inFlight.get(db) ?? [])]);
}

/** Settles one request; never throws (the answer, or the real error, the client is owed comes first). */
export function settle(deps: SettleDeps, r: SettlementRecord, delaysMs: readonly number[] = RETRY_DELAYS_MS): Promise<void> {
  let set = inFlight.get(deps.db);
  if (!set) inFlight.set(deps.db, (set = new Set()));
  const run = settleOnce(deps, r, delaysMs);
  set.add(run);
  void run.finally(() => set.delete(run));
  return run;
}

async function settleOnce(deps: SettleDeps, r: SettlementRecord, delaysMs: readonly number[]): Promise<void> {
  let error: unknown;
  for (let attempt = 0; ; attempt++) {
    let written = false;
    try {
      await recordSettlement(deps.db, r);
      written = true;
    } catch (e) {
      error = e;
    }
    if (written) return await replayAfterRecovery(deps);
    if (attempt >= delaysMs.length) break;
    await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
  }
  const path = journalPathFor(localDirOf(deps.db));
  try {
    if (!path) throw new Error("an in-memory database has no journal");
    await inTurn(path, () => appendSettlement(path, r));
    deps.metrics?.settlementFailed(true);
    deps.logger.error("usage not recorded; kept in the settlement journal until the database takes it", { request_id: r.requestId, error: String(error) });
    await announce(deps.logger, path, [r]);
  } catch (e) {
    // The last resort: the whole settlement in the log, for the operator to enter by hand.
    deps.metrics?.settlementFailed(false);
    deps.logger.error("usage not recorded and not journaled", { request_id: r.requestId, error: String(error), journal_error: String(e), settlement: r });
  }
}

/** Tells the other replicas of journaled charges; a store that cannot be told now hears of them at the next replay. */
async function announce(logger: Logger, path: string, records: SettlementRecord[]): Promise<void> {
  if (!records.length) return;
  await journalIndexOf(path)?.add(records).catch((e) => logger.warn("journaled charges not announced to the other replicas", { count: records.length, error: String(e) }));
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
 * Writes the journal's settlements into the database and empties it, taking its turn with appends (none is journaled
 * meanwhile): at start-up, before any request, and after a settlement the database took again.
 */
export async function replaySettlements(db: Db, logger: Logger): Promise<ReplayReport> {
  const path = journalPathFor(localDirOf(db));
  if (!path) return { replayed: 0, alreadyRecorded: 0, kept: 0, unreadable: 0 };
  return inTurn(path, () => replayJournal(db, path, logger));
}

async function replayJournal(db: Db, path: string, logger: Logger): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, alreadyRecorded: 0, kept: 0, unreadable: 0 };
  const { records, unreadable } = readJournal(path);
  if (!records.length && !unreadable.length) return report;
  for (const line of unreadable) logger.error("settlement journal line unreadable; dropped", { line: line.slice(0, 2000) });
  const kept: SettlementRecord[] = [];
  const written: SettlementRecord[] = [];
  for (const r of records) {
    try {
      if (await recordSettlement(db, r)) report.replayed++;
      else report.alreadyRecorded++;
      written.push(r);
    } catch (e) {
      kept.push(r);
      logger.error("journaled settlement not replayed; kept for the next replay", { request_id: r.requestId, error: String(e) });
    }
  }
  rewriteJournal(path, kept);
  // The database holds these charges now (the balance says so): the other replicas stop counting them.
  if (written.length) {
    await journalIndexOf(path)?.remove(written).catch((e) => logger.warn("replayed charges not withdrawn from the other replicas' count", { count: written.length, error: String(e) }));
  }
  await announce(logger, path, kept);
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
async function replayAfterRecovery(deps: SettleDeps): Promise<void> {
  const path = journalPathFor(localDirOf(deps.db));
  if (!path || !existsSync(path) || performance.now() < (retryAt.get(path) ?? 0)) return;
  let report: ReplayReport;
  try {
    report = await replaySettlements(deps.db, deps.logger);
  } catch (e) {
    // The journal could not be read or rewritten: it stays as it is (a replay is idempotent), and holds still count it.
    retryAt.set(path, performance.now() + REPLAY_RETRY_MS);
    deps.logger.error("settlement journal not replayed", { error: String(e) });
    return;
  }
  if (report.kept) retryAt.set(path, performance.now() + REPLAY_RETRY_MS);
  else retryAt.delete(path);
  // Another settlement's replay, which took its turn first, emptied the journal already.
  if (!report.replayed && !report.alreadyRecorded && !report.kept && !report.unreadable) return;
  deps.metrics?.settlementsReplayed(report.replayed);
  deps.logger.info("settlement journal replayed", { ...report });
}
