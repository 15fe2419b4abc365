// Billing accounts and the ledger: credits from the operator, and one charge per usage row of a billed team,
// written in the usage row's own transaction (settlement-repo.ts).
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { formatMicros, MAX_BALANCE_MICROS } from "../billing/money.ts";
import type { Db, PgDb, PgTables, SqliteDb, Tables } from "./client.ts";
import { preparedFirst } from "./prepared.ts";

export type BillingAccount = Tables["billingAccounts"]["$inferSelect"];

/** A credit that would take the balance past MAX_BALANCE_MICROS; its message says by how much the balance may still grow. */
export class BalanceLimitError extends RangeError {
  constructor(balance: number, micros: number) {
    super(`this credit (${formatMicros(micros)}) would take the balance past ${formatMicros(MAX_BALANCE_MICROS)}; it may grow by at most ${formatMicros(Math.max(0, MAX_BALANCE_MICROS - balance))} more`);
  }
}
export type LedgerRow = Tables["ledger"]["$inferSelect"];
/** A SQLite transaction's synchronous body (see client.ts), or the database outside one. */
type LiteTx = Pick<SqliteDb, "select" | "insert" | "update">;
/** A Postgres transaction's body. */
type PgTx = Pick<PgDb, "select" | "insert" | "update">;

const nowS = () => Math.floor(Date.now() / 1000);

const accountOf = preparedFirst("kiln_account_of", (q, { billingAccounts }) =>
  q.select().from(billingAccounts).where(eq(billingAccounts.teamId, sql.placeholder("teamId"))),
);

/** Read for every request of a billed team: a prepared statement. */
export async function findAccount(db: Db, teamId: number): Promise<BillingAccount | undefined> {
  return accountOf(db, { teamId });
}

/** Billing on (the account is opened with a zero balance if the team has none) or off (balance and ledger kept). */
export async function setBillingEnabled(db: Db, teamId: number, on: boolean): Promise<void> {
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    lite.transaction((tx) => {
      tx.update(t.teams).set({ billingEnabled: on }).where(eq(t.teams.id, teamId)).run();
      if (on) tx.insert(t.billingAccounts).values({ teamId }).onConflictDoNothing().run();
    });
    return;
  }
  const { pg, pt } = db;
  await pg.transaction(async (tx) => {
    await tx.update(pt.teams).set({ billingEnabled: on }).where(eq(pt.teams.id, teamId));
    if (on) await tx.insert(pt.billingAccounts).values({ teamId }).onConflictDoNothing();
  });
}

/** Adds credit, opening the account if the team has none; returns the new balance. */
export async function credit(db: Db, teamId: number, micros: number, note: string | null): Promise<number> {
  if (!Number.isSafeInteger(micros) || micros <= 0) throw new RangeError(`a credit is a positive whole number of micro-units, got ${micros}`);
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    return lite.transaction((tx) => {
      tx.insert(t.billingAccounts).values({ teamId }).onConflictDoNothing().run();
      // Checked inside the transaction, so racing credits cannot together pass it (and nothing is written when refused).
      const now = tx.select({ balance: t.billingAccounts.balanceMicros }).from(t.billingAccounts).where(eq(t.billingAccounts.teamId, teamId)).get()!.balance;
      if (now + micros > MAX_BALANCE_MICROS) throw new BalanceLimitError(now, micros);
      const balance = applyToBalance(tx, t, teamId, micros);
      tx.insert(t.ledger).values({ teamId, kind: "credit", amountMicros: micros, balanceAfterMicros: balance, note }).run();
      return balance;
    });
  }
  const { pg, pt } = db;
  return pg.transaction(async (tx) => {
    await tx.insert(pt.billingAccounts).values({ teamId }).onConflictDoNothing();
    // The row stays locked until commit: a racing credit (or charge) on any replica waits, then reads this balance.
    const [row] = await tx.select({ balance: pt.billingAccounts.balanceMicros }).from(pt.billingAccounts).where(eq(pt.billingAccounts.teamId, teamId)).for("update");
    if (row!.balance + micros > MAX_BALANCE_MICROS) throw new BalanceLimitError(row!.balance, micros);
    const balance = await applyToBalancePg(tx, pt, teamId, micros);
    await tx.insert(pt.ledger).values({ teamId, kind: "credit", amountMicros: micros, balanceAfterMicros: balance, note });
    return balance;
  });
}

/** Marks the account lapsed (every request of the billed team gets 402) or reinstates it; false without an account. */
export async function setLapsed(db: Db, teamId: number, lapsed: boolean): Promise<boolean> {
  const { billingAccounts } = db.t;
  const rows = await db.q
    .update(billingAccounts)
    .set({ lapsedAt: lapsed ? nowS() : null, updatedAt: nowS() })
    .where(eq(billingAccounts.teamId, teamId))
    .returning({ teamId: billingAccounts.teamId });
  return rows.length > 0;
}

function applyToBalance(tx: LiteTx, t: Tables, teamId: number, delta: number): number {
  const row = tx
    .update(t.billingAccounts)
    .set({ balanceMicros: sql`${t.billingAccounts.balanceMicros} + ${delta}`, updatedAt: nowS() })
    .where(eq(t.billingAccounts.teamId, teamId))
    .returning({ balance: t.billingAccounts.balanceMicros })
    .get();
  if (!row) throw new Error(`team ${teamId} has no billing account`);
  return row.balance;
}

/** One statement: the update locks the row and returns the balance after it, so racing charges each see their own. */
async function applyToBalancePg(tx: PgTx, t: PgTables, teamId: number, delta: number): Promise<number> {
  const [row] = await tx
    .update(t.billingAccounts)
    .set({ balanceMicros: sql`${t.billingAccounts.balanceMicros} + ${delta}`, updatedAt: nowS() })
    .where(eq(t.billingAccounts.teamId, teamId))
    .returning({ balance: t.billingAccounts.balanceMicros });
  if (!row) throw new Error(`team ${teamId} has no billing account`);
  return row.balance;
}

/**
 * Inside the usage row's SQLite transaction: if the team's billing is on, its charge for that row. A billed team whose
 * account vanished mid-request gets one (in debt), so no usage row of a billed team goes without its charge. `note`:
 * what the entry says beside it (the service tier and its price factor, when not the list price's default tier).
 */
export function chargeUsage(tx: LiteTx, t: Tables, teamId: number, requestId: string, costMicros: number, note: string | null = null): void {
  const team = tx.select({ on: t.teams.billingEnabled }).from(t.teams).where(eq(t.teams.id, teamId)).get();
  if (!team?.on) return;
  tx.insert(t.billingAccounts).values({ teamId }).onConflictDoNothing().run();
  const balance = applyToBalance(tx, t, teamId, -costMicros);
  tx.insert(t.ledger).values({ teamId, kind: "charge", amountMicros: -costMicros, balanceAfterMicros: balance, requestId, note }).run();
}

/** chargeUsage inside the usage row's Postgres transaction. */
export async function chargeUsagePg(tx: PgTx, t: PgTables, teamId: number, requestId: string, costMicros: number, note: string | null = null): Promise<void> {
  const [team] = await tx.select({ on: t.teams.billingEnabled }).from(t.teams).where(eq(t.teams.id, teamId));
  if (!team?.on) return;
  await tx.insert(t.billingAccounts).values({ teamId }).onConflictDoNothing();
  const balance = await applyToBalancePg(tx, t, teamId, -costMicros);
  await tx.insert(t.ledger).values({ teamId, kind: "charge", amountMicros: -costMicros, balanceAfterMicros: balance, requestId, note });
}

/** The newest entries first; `before` (a ledger id) pages back. */
export async function ledgerOf(db: Db, teamId: number, limit: number, before?: number): Promise<LedgerRow[]> {
  const { ledger } = db.t;
  const where = before ? and(eq(ledger.teamId, teamId), lt(ledger.id, before)) : eq(ledger.teamId, teamId);
  return await db.q.select().from(ledger).where(where).orderBy(desc(ledger.id)).limit(limit);
}
