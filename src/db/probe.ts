// `kiln doctor`'s database check: opens a scratch database in the data dir the way kiln's needs it, writes, reads
// back and removes it. Here, beside client.ts, so the check follows the database kiln really uses.
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";

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
