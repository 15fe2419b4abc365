// Reads that run on every request, prepared once per database: drizzle builds a query's SQL on each call, which cost
// more than running it. SQLite keeps a prepared statement read with `.get()`; Postgres drizzle's prepared query.
import type { Db, SqliteDb, Tables } from "./client.ts";

/** What a select written once (typed as SQLite's: see client.ts) offers: SQLite's `.prepare()` and its `.get()`. */
interface Preparable<R> {
  prepare(): { get(params?: Record<string, unknown>): R };
}

/** The same select built over Postgres's drizzle: pg-core's `.prepare(name)` and `.execute()`, which reads every row. */
interface PgPreparable {
  prepare(name: string): { execute(params?: Record<string, unknown>): Promise<unknown[]> };
}

/**
 * A select built once per database by `build` (with `sql.placeholder`s for `params`), whose first row (or undefined)
 * each call reads: at once on SQLite, as a promise on Postgres (callers await either). `name` names Postgres's
 * prepared query.
 */
export function preparedFirst<R, P extends Record<string, unknown>>(name: string, build: (q: SqliteDb, t: Tables) => Preparable<R | undefined>): (db: Db, params: P) => R | undefined | Promise<R | undefined> {
  const lite = new WeakMap<Db, { get(params?: Record<string, unknown>): R | undefined }>();
  const pg = new WeakMap<Db, { execute(params?: Record<string, unknown>): Promise<unknown[]> }>();
  // SQLite's read answers synchronously, as it did before there were two dialects: no promise of its own on the hot path.
  return (db, params) => {
    if (db.dialect === "sqlite") {
      let q = lite.get(db);
      if (!q) lite.set(db, (q = build(db.lite, db.t).prepare()));
      return q.get(params);
    }
    let q = pg.get(db);
    // The builder was made by Postgres's drizzle: its prepare is pg-core's, typed here by hand.
    if (!q) pg.set(db, (q = (build(db.q, db.t) as unknown as PgPreparable).prepare(name)));
    return q.execute(params).then((rows) => rows[0] as R | undefined);
  };
}
