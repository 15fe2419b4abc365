// Settling a finished request in the database: its usage row and, for a billed team, its ledger charge, in one
// transaction, so no usage row of a billed team goes without its charge (src/billing/settle.ts retries and journals).
import { eq } from "drizzle-orm";
import { chargeUsage } from "./billing-repo.ts";
import type { Db } from "./client.ts";
import { usage } from "./schema.ts";
import { insertUsage, type NewUsage } from "./usage-repo.ts";

/**
 * Writes the usage row and its charge, unless a row with the same request id exists (a journal replayed again after
 * a crash mid-replay): true when written. Called once per finished request: the transaction's body is synchronous
 * (SQLite: see client.ts), so nothing else runs between the check and the writes.
 */
export async function recordSettlement(db: Db, r: NewUsage): Promise<boolean> {
  return db.transaction((tx) => {
    if (tx.select({ id: usage.id }).from(usage).where(eq(usage.requestId, r.requestId)).get()) return false;
    insertUsage(tx, r);
    chargeUsage(tx, r.teamId, r.requestId, r.costMicros);
    return true;
  });
}
