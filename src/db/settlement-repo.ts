// Settling a finished request in the database: its usage row and, for a billed team, its ledger charge, in one
// transaction, so no usage row of a billed team goes without its charge (src/billing/settle.ts retries and journals).
import { eq } from "drizzle-orm";
import { FULL_PRICE, tierNote } from "../billing/tier-prices.ts";
import { chargeUsage, chargeUsagePg } from "./billing-repo.ts";
import type { Db } from "./client.ts";
import { insertUsage, type NewUsage } from "./usage-repo.ts";

/**
 * Writes the usage row and its charge, unless a row with the same request id exists (a journal replayed again after
 * a crash mid-replay): true when written. Called once per finished request.
 */
export async function recordSettlement(db: Db, r: NewUsage): Promise<boolean> {
  const note = tierNote(r.serviceTier ?? "default", r.priceFactorMilli ?? FULL_PRICE);
  if (db.dialect === "sqlite") {
    const { lite, t } = db;
    // The transaction's body is synchronous (see client.ts), so nothing else runs between the check and the writes.
    return lite.transaction((tx) => {
      if (tx.select({ id: t.usage.id }).from(t.usage).where(eq(t.usage.requestId, r.requestId)).get()) return false;
      insertUsage(tx, t, r);
      chargeUsage(tx, t, r.teamId, r.requestId, r.costMicros, note);
      return true;
    });
  }
  const { pg, pt } = db;
  return pg.transaction(async (tx) => {
    // The check is the insert: a row with this request id (committed, or being written by another replica, whose
    // commit this waits for) makes it write nothing.
    const written = await tx.insert(pt.usage).values(r).onConflictDoNothing({ target: pt.usage.requestId }).returning({ id: pt.usage.id });
    if (!written.length) return false;
    await chargeUsagePg(tx, pt, r.teamId, r.requestId, r.costMicros, note);
    return true;
  });
}
