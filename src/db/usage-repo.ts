// Usage rows: one per finished generation request; rate limits and billing read them.
import type { Db } from "./client.ts";
import { usage } from "./schema.ts";

export type UsageRow = typeof usage.$inferSelect;
export type NewUsage = typeof usage.$inferInsert;

export function recordUsage(db: Db, row: NewUsage): void {
  db.insert(usage).values(row).run();
}
