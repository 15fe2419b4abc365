// What a failed write to kiln's own storage (the data dir's disk, SQLite's files) means for a client: the disk is
// full, or it cannot be written at all (read-only, immutable, failing). Either is a 503 the client may retry later,
// never a generic 500; the status page and admission ask the same question up front (src/db/storage-health.ts).

export type StorageFaultKind = "full" | "unwritable";

/** A write kiln refused itself before the disk could (below its space reserve, or an unwritable database file). */
export class StorageFault extends Error {
  override name = "StorageFault";
  constructor(readonly kind: StorageFaultKind, message: string) {
    super(message);
  }
}

const FULL = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);
const UNWRITABLE = new Set(["EROFS", "EPERM", "EACCES", "EIO", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PERM"]);

/** SQLite's extended codes (SQLITE_IOERR_SHMSIZE) → their primary code (SQLITE_IOERR); other codes as they are. */
function primary(code: string): string {
  const m = /^SQLITE_[A-Z]+/.exec(code);
  return m ? m[0] : code;
}

/**
 * The storage fault `e` is (a Node fs error, bun:sqlite's SQLiteError, or a StorageFault), following `cause` (drizzle
 * wraps the driver's error); null for any other error.
 */
export function storageFaultOf(e: unknown): StorageFaultKind | null {
  for (let at = e, depth = 0; at && typeof at === "object" && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    if (at instanceof StorageFault) return at.kind;
    const code = (at as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    if (FULL.has(primary(code))) return "full";
    if (UNWRITABLE.has(primary(code))) return "unwritable";
  }
  return null;
}
