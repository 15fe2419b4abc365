// What other replicas learn of a replica's settlement journal. The journal is a file on the replica's own disk (it
// must work when the database is what failed), so without this, while Postgres refuses writes but serves reads, each
// replica would count only its own journaled charges and admit up to a team's whole balance. With a shared store
// (Redis: redis-journal-index.ts) every journaled charge is announced there when it is journaled and withdrawn once its
// replay has written it into the database, and billing admission counts every replica's (billing-holds.ts).
import type { SettlementRecord } from "./settlement-journal.ts";

export interface JournalIndex {
  /** Announces journaled charges (again, for ones already announced: the same request id counts once). */
  add(records: readonly SettlementRecord[]): Promise<void>;
  /** Withdraws charges the database now holds. */
  remove(records: readonly SettlementRecord[]): Promise<void>;
  /** Every replica's journaled charges of the team still announced: request id → micro-units. */
  of(teamId: number): Promise<ReadonlyMap<string, number>>;
}

/** The index each journal (by its path) announces its charges to: set at start-up when the replicas share a store. */
const indexes = new Map<string, JournalIndex>();

export function shareJournal(path: string, index: JournalIndex): void {
  indexes.set(path, index);
}

export function unshareJournal(path: string): void {
  indexes.delete(path);
}

export function journalIndexOf(path: string): JournalIndex | undefined {
  return indexes.get(path);
}
