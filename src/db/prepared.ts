// Queries that run on every request, prepared once per database: drizzle builds a query's SQL on each call, which cost
// more than running it.
import type { Db } from "./client.ts";

export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let q = cache.get(db);
    if (!q) cache.set(db, (q = build(db)));
    return q;
  };
}
