// Whether kiln's own storage takes writes now, asked up front by admission and the status page: the data dir (home
// of the settlement journal) and, with SQLite, the database's files are writable, and the disk is above its reserve.
// A few system calls, no write: cheap enough for every generation request and every health check.
import { accessSync, constants } from "node:fs";
import { belowReserve, freeBytes, STORAGE_RESERVE_BYTES } from "../fs/disk-space.ts";
import type { StorageFaultKind } from "../fs/storage-fault.ts";
import { type Db, databaseFiles, localDirOf } from "./client.ts";

export interface StorageTrouble {
  kind: StorageFaultKind;
  /**
   * A request's usage could be recorded nowhere: SQLite's database and the settlement journal share the failing disk,
   * so generation is refused and the server is out of a balancer's rotation. With Postgres the database still records
   * usage (only the journal, its fallback, is lost), so requests go on.
   */
  blocking: boolean;
  /** What the status page says: no paths, no error codes. */
  message: string;
}

/** The first of `paths` that exists and cannot be written, with why; null when all can (or do not exist yet). */
function unwritable(paths: string[]): string | null {
  for (const path of paths) {
    try {
      accessSync(path, constants.W_OK);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== "ENOENT") return code ?? "error";
    }
  }
  return null;
}

/** What is wrong with kiln's storage now, or null. `free`: how free space is read (tests inject a full disk). */
export function storageTrouble(db: Db, free: (dir: string) => number | null = freeBytes): StorageTrouble | null {
  const dir = localDirOf(db);
  if (dir === null) return null;
  const blocking = db.dialect === "sqlite";
  if (unwritable(databaseFiles(db))) return { kind: "unwritable", blocking: true, message: "The server cannot write to its database." };
  if (unwritable([dir])) return { kind: "unwritable", blocking, message: "The server cannot write to its data directory." };
  if (belowReserve(dir, STORAGE_RESERVE_BYTES, free)) return { kind: "full", blocking, message: "The server's disk is full." };
  return null;
}
