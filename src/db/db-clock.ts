// The database's own clock in unix milliseconds, for deadlines every replica must read alike: a lease's end is
// computed by the statement that writes it, never by the clock of the process that sends it (or before it is sent).
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";

/** Now, on the database's clock, in unix milliseconds (Postgres: the transaction's start; SQLite: the statement's). */
export function dbNowMs(db: Pick<Db, "dialect">): SQL<number> {
  return db.dialect === "sqlite" ? sql<number>`CAST(unixepoch('subsec') * 1000 AS INTEGER)` : sql<number>`(extract(epoch from now()) * 1000)::bigint`;
}

/** `ms` after now on the database's clock. */
export function dbDeadline(db: Pick<Db, "dialect">, ms: number): SQL<number> {
  // An integer literal, not a parameter: Postgres then keeps the sum a bigint, as the column is.
  return sql<number>`(${dbNowMs(db)} + ${sql.raw(String(Math.trunc(ms)))})`;
}
