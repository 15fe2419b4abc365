// Billing accounts and the ledger: credits from the operator, and one charge per usage row of a billed team,
// written in the usage row's own transaction (settlement-repo.ts).
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { formatMicros, MAX_BALANCE_MICROS } from "../billing/money.ts";
import type { Db, SqliteDb } from "./client.ts";
import { preparedFor } from "./prepared.ts";
import { billingAccounts, ledger, teams } from "./schema.ts";

export type BillingAccount = typeof billingAccounts.$inferSelect;

/** A credit that would take the balance past MAX_BALANCE_MICROS; its message says by how much the balance may still grow. */
export class BalanceLimitError extends RangeError {
  constructor(balance: number, micros: number) {
    super(`this credit (${formatMicros(micros)}) would take the balance past ${formatMicros(MAX_BALANCE_MICROS)}; it may grow by at most ${formatMicros(Math.max(0, MAX_BALANCE_MICROS - balance))} more`);
  }
}
export type LedgerRow = typeof ledger.$inferSelect;
/** A transaction's synchronous body (SQLite: see client.ts), or the database outside one. */
type Tx = Pick<SqliteDb, "select" | "insert" | "update">;

const nowS = () => Math.floor(Date.now() / 1000);

const accountOf = preparedFor((db) => db.select().from(billingAccounts).where(eq(billingAccounts.teamId, sql.placeholder("teamId"))).prepare());

/** Read for every request of a billed team: a prepared statement. */
export async function findAccount(db: Db, teamId: number): Promise<BillingAccount | undefined> {
  return accountOf(db).get({ teamId });
}

/** Billing on (the account is opened with a zero balance if the team has none) or off (balance and ledger kept). */
export async function setBillingEnabled(db: Db, teamId: number, on: boolean): Promise<void> {
  db.transaction((tx) => {
    tx.update(teams).set({ billingEnabled: on }).where(eq(teams.id, teamId)).run();
    if (on) tx.insert(billingAccounts).values({ teamId }).onConflictDoNothing().run();
  });
}

/** Adds credit, opening the account if the team has none; returns the new balance. */
export async function credit(db: Db, teamId: number, micros: number, note: string | null): Promise<number> {
  if (!Number.isSafeInteger(micros) || micros <= 0) throw new RangeError(`a credit is a positive whole number of micro-units, got ${micros}`);
  return db.transaction((tx) => {
    tx.insert(billingAccounts).values({ teamId }).onConflictDoNothing().run();
    // Checked inside the transaction, so racing credits cannot together pass it (and nothing is written when refused).
    const now = tx.select({ balance: billingAccounts.balanceMicros }).from(billingAccounts).where(eq(billingAccounts.teamId, teamId)).get()!.balance;
    if (now + micros > MAX_BALANCE_MICROS) throw new BalanceLimitError(now, micros);
    const balance = applyToBalance(tx, teamId, micros);
    tx.insert(ledger).values({ teamId, kind: "credit", amountMicros: micros, balanceAfterMicros: balance, note }).run();
    return balance;
  });
}

/** Marks the account lapsed (every request of the billed team gets 402) or reinstates it; false without an account. */
export async function setLapsed(db: Db, teamId: number, lapsed: boolean): Promise<boolean> {
  const rows = await db
    .update(billingAccounts)
    .set({ lapsedAt: lapsed ? nowS() : null, updatedAt: nowS() })
    .where(eq(billingAccounts.teamId, teamId))
    .returning({ teamId: billingAccounts.teamId });
  return rows.length > 0;
}

function applyToBalance(tx: Tx, teamId: number, delta: number): number {
  const row = tx
    .update(billingAccounts)
    .set({ balanceMicros: sql`${billingAccounts.balanceMicros} + ${delta}`, updatedAt: nowS() })
    .where(eq(billingAccounts.teamId, teamId))
    .returning({ balance: billingAccounts.balanceMicros })
    .get();
  if (!row) throw new Error(`team ${teamId} has no billing account`);
  return row.balance;
}

/**
 * Inside the usage row's transaction: if the team's billing is on, its charge for that row. A billed team whose
 * account vanished mid-request gets one (in debt), so no usage row of a billed team goes without its charge.
 */
export function chargeUsage(tx: Tx, teamId: number, requestId: string, costMicros: number): void {
  const team = tx.select({ on: teams.billingEnabled }).from(teams).where(eq(teams.id, teamId)).get();
  if (!team?.on) return;
  tx.insert(billingAccounts).values({ teamId }).onConflictDoNothing().run();
  const balance = applyToBalance(tx, teamId, -costMicros);
  tx.insert(ledger).values({ teamId, kind: "charge", amountMicros: -costMicros, balanceAfterMicros: balance, requestId }).run();
}

/** The newest entries first; `before` (a ledger id) pages back. */
export async function ledgerOf(db: Db, teamId: number, limit: number, before?: number): Promise<LedgerRow[]> {
  const where = before ? and(eq(ledger.teamId, teamId), lt(ledger.id, before)) : eq(ledger.teamId, teamId);
  return await db.select().from(ledger).where(where).orderBy(desc(ledger.id)).limit(limit);
}
