// Opens kiln's Postgres database (issue 29): Bun's SQL client, the embedded pg migrations, drizzle over schema-pg.ts.
// Not yet behind openDatabase/Db: it joins them when the repositories can run on it.
import { SQL } from "bun";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import { applyPgMigrations } from "./migrate-pg.ts";
import * as schema from "./schema-pg.ts";

/** drizzle over Bun's SQL client with kiln's Postgres schema. */
export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

export interface PostgresOptions {
  /** Connections in the pool; Bun's default is 10. */
  max?: number;
}

/** Connects to `url` (postgres://…), applies the pending migrations, and returns drizzle over the pool. */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<PgDb> {
  // Bun's SQL picks its adapter from the scheme (mysql://, sqlite:…): only Postgres may get this far. The message
  // leaves the URL out, since it may hold a password.
  if (!isPostgresUrl(url)) throw new Error("a Postgres database URL starts with postgres:// or postgresql://");
  const client = new SQL(url, { adapter: "postgres", ...(opts.max === undefined ? {} : { max: opts.max }) });
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
