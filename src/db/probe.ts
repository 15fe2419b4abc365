// `kiln doctor`'s database check: SQLite opened in the data dir the way kiln's needs it (a scratch database written,
// read back and removed), or Postgres at KILN_DATABASE_URL (connected, written and read back in a temporary table).
// Here, beside client.ts, so the check follows the database kiln really uses.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { isPostgresUrl } from "./pg-client.ts";

/** What was checked, in one line; throws with the reason when the data dir cannot hold kiln's database. */
export async function probeDatabase(dataDir: string): Promise<string> {
  const file = join(dataDir, `.doctor-${process.pid}.db`);
  const db = new Database(file, { create: true, strict: true });
  try {
    const mode = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode = WAL").get()?.journal_mode;
    if (mode !== "wal") throw new Error(`journal_mode is ${mode}, not wal`);
    db.run("CREATE TABLE t (v TEXT)");
    db.run("INSERT INTO t (v) VALUES (?)", ["kiln"]);
    const v = db.query<{ v: string }, []>("SELECT v FROM t").get()?.v;
    if (v !== "kiln") throw new Error("read back a different value than written");
    const version = db.query<{ v: string }, []>("SELECT sqlite_version() AS v").get()?.v;
    return `SQLite ${version}: open, write, read back, WAL`;
  } finally {
    db.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  }
}

/**
 * The same for Postgres: connects (within 10 s), writes and reads back a row of a temporary table (gone with the
 * session, so nothing is left behind and no migration runs), and names the server's version and the database.
 */
export async function probePostgres(url: string): Promise<string> {
  if (!isPostgresUrl(url)) throw new Error("a Postgres database URL starts with postgres:// or postgresql://");
  const client = new SQL(url, { adapter: "postgres", max: 1, connectionTimeout: 10 });
  try {
    const [info] = (await client`SELECT current_setting('server_version') AS version, current_database() AS name`) as { version: string; name: string }[];
    // One reserved connection: a temporary table belongs to the session that made it.
    const conn = await client.reserve();
    try {
      await conn`CREATE TEMPORARY TABLE kiln_doctor (v text)`;
      await conn`INSERT INTO kiln_doctor (v) VALUES (${"kiln"})`;
      const [row] = (await conn`SELECT v FROM kiln_doctor`) as { v: string }[];
      if (row?.v !== "kiln") throw new Error("read back a different value than written");
    } finally {
      conn.release();
    }
    return `Postgres ${info!.version}, database ${info!.name}: connect, write, read back`;
  } finally {
    await client.close();
  }
}
