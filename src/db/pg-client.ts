// Opens kiln's Postgres database (KILN_DATABASE_URL): Bun's SQL client, the embedded pg migrations, drizzle over
// schema-pg.ts. client.ts wraps it in the `Db` handle the repositories take.
import { SQL } from "bun";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import { BunSQLPreparedQuery } from "drizzle-orm/bun-sql/session";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { applyPgMigrations } from "./migrate-pg.ts";
import * as schema from "./schema-pg.ts";

/** drizzle over Bun's SQL client with kiln's Postgres schema. */
export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

export interface PostgresOptions {
  /** Connections in the pool; Bun's default is 10. */
  max?: number;
  /** Seconds an idle connection stays open; Bun's default 0 keeps it. */
  idleTimeout?: number;
}

// drizzle 0.45 wraps every Postgres error in a DrizzleQueryError whose message is the query and all its parameters
// (drizzle-orm#4691), not the database's reason: a stored response's events, a prompt, would reach kiln's log, and a
// unique violation would not say so. Queries through this driver throw Bun's own error (message, code, constraint)
// instead, as bun:sqlite's do; test/unit/db/pg-errors.test.ts pins it.
const prepared = BunSQLPreparedQuery.prototype as unknown as { queryWithCache(...args: unknown[]): Promise<unknown> };
const wrapped = prepared.queryWithCache;
prepared.queryWithCache = async function (this: unknown, ...args: unknown[]) {
  try {
    return await wrapped.apply(this, args);
  } catch (e) {
    throw e instanceof DrizzleQueryError && e.cause instanceof Error ? e.cause : e;
  }
};

/** Connects to `url` (postgres://…), applies the pending migrations, and returns drizzle over the pool. */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<PgDb> {
  // Bun's SQL picks its adapter from the scheme (mysql://, sqlite:…): only Postgres may get this far. The message
  // leaves the URL out, since it may hold a password.
  if (!isPostgresUrl(url)) throw new Error("a Postgres database URL starts with postgres:// or postgresql://");
  const client = new SQL(url, { adapter: "postgres", ...(opts.max === undefined ? {} : { max: opts.max }), ...(opts.idleTimeout === undefined ? {} : { idleTimeout: opts.idleTimeout }) });
  try {
    await applyPgMigrations(client);
  } catch (e) {
    // Start-up stops with the migration's (or the connection's) own message; the pool must not outlive it.
    await client.close();
    throw e;
  }
  return drizzle({ client, schema });
}

/** Whether `url` names a Postgres database (the schemes Bun's SQL and libpq read as Postgres). Pure. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** Closes the pool once the queries already sent have finished. */
export async function closePostgres(db: PgDb): Promise<void> {
  await db.$client.close();
}
