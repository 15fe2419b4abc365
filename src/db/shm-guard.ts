// SQLite in WAL mode keeps its wal-index in `<db>-shm`, mapped into memory and written through that mapping. When the
// file stops taking writes (made immutable, its filesystem read-only) the next write to a mapped page is a SIGBUS,
// which kills the whole process with no log line (bun cannot catch it). So every statement first checks that the
// file can still be written (one access() call, about 2 µs) and fails as a StorageFault instead, which requests
// answer with a 503 and the status page reports; SQLite itself is never asked while the file is unwritable.
import type { Database } from "bun:sqlite";
import { accessSync, constants } from "node:fs";
import { StorageFault } from "../fs/storage-fault.ts";

const STATEMENT_RUNS = ["run", "all", "get", "values", "iterate"] as const;

/** Throws a StorageFault when `shm` exists and cannot be written. */
export function checkSharedMemory(shm: string): void {
  try {
    accessSync(shm, constants.W_OK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    // Not there: SQLite creates it (through write(), which fails cleanly) before it maps it.
    if (code === "ENOENT") return;
    throw new StorageFault("unwritable", `the database's shared-memory file ${shm} cannot be written (${code})`);
  }
}

/** Makes every statement `sqlite` runs (prepared, queried, or run directly) check its shared-memory file first. */
export function guardSharedMemory(sqlite: Database): void {
  const shm = `${sqlite.filename}-shm`;
  const guarded = new WeakSet<object>();
  const guard = <S extends object>(statement: S): S => {
    if (guarded.has(statement)) return statement;
    guarded.add(statement);
    const methods = statement as unknown as Record<string, unknown>;
    for (const name of STATEMENT_RUNS) {
      const run = methods[name];
      if (typeof run !== "function") continue;
      methods[name] = (...args: unknown[]) => {
        checkSharedMemory(shm);
        return run.apply(statement, args);
      };
    }
    return statement;
  };
  const prepare = sqlite.prepare.bind(sqlite);
  const query = sqlite.query.bind(sqlite);
  const run = sqlite.run.bind(sqlite);
  sqlite.prepare = ((...args: Parameters<typeof prepare>) => guard(prepare(...args))) as typeof sqlite.prepare;
  sqlite.query = ((...args: Parameters<typeof query>) => guard(query(...args))) as typeof sqlite.query;
  sqlite.run = sqlite.exec = ((...args: Parameters<typeof run>) => {
    checkSharedMemory(shm);
    return run(...args);
  }) as typeof sqlite.run;
}

/** Whether `sqlite` may be closed: closing checkpoints through the shared memory, so not while it is unwritable. */
export function closableNow(sqlite: Database): boolean {
  try {
    checkSharedMemory(`${sqlite.filename}-shm`);
    return true;
  } catch {
    return false;
  }
}
