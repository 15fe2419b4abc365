// One data dir, one server: `kiln serve` holds `<data dir>/kiln.pid` (its pid and the process's start time) while it
// runs, so a second server started on the same dir refuses to start and names the first instead of sharing its
// database and sweeping away its uploads. Bun has no flock: the file is created with O_EXCL, and a file left by a
// process that is gone (killed, crashed, or a pid now used by another program) is taken over.
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

export const LOCK_FILE = "kiln.pid";

/** Another live server holds the data dir: start-up stops with this one line. */
export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
}

/** Who holds a lock: the pid and its start time (clock ticks since boot, /proc/<pid>/stat; null where there is no /proc). */
export interface LockHolder {
  pid: number;
  started: number | null;
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat), or null where it cannot be read. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const started = Number(fields[19]);
    return Number.isFinite(started) ? started : null;
  } catch {
    return null;
  }
}

/** Whether the process `h` names is still the one running: alive, and (where /proc says) started when it did. */
export function holderAlive(h: LockHolder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    // EPERM: alive, owned by another user.
    if ((e as { code?: string }).code !== "EPERM") return false;
  }
  if (h.started === null) return true;
  const now = processStartTime(h.pid);
  return now === null || now === h.started;
}

/** A lock file's content → its holder; null for anything else (a torn write: nobody holds it). */
export function parseHolder(text: string): LockHolder | null {
  const m = /^(\d+)(?: (\d+))?\n?$/.exec(text);
  return m ? { pid: Number(m[1]), started: m[2] === undefined ? null : Number(m[2]) } : null;
}

function readHolder(path: string): LockHolder | null {
  try {
    return parseHolder(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

export interface DataDirLock {
  /** Removes the lock file (once; a lock taken over since is left alone). */
  release(): void;
}

/**
 * Takes the data dir for this process, or throws DataDirLockedError naming the live server that holds it. The file
 * is written whole under a temporary name and linked into place (a link fails if the name exists), so a reader never
 * sees it half-written. A lock held by this very process (a restart in the same process, or pid 1 again in a new
 * container) counts as stale.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, started: processStartTime(process.pid) };
  const temp = `${path}.${process.pid}.${crypto.randomUUID().slice(0, 8)}`;
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${me.pid}${me.started === null ? "" : ` ${me.started}`}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temp, path);
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== "EEXIST" || attempt >= 3) throw e;
      }
      const holder = readHolder(path);
      if (holder && holder.pid !== me.pid && holderAlive(holder)) {
        throw new DataDirLockedError(`the data dir ${dataDir} is in use by another kiln (pid ${holder.pid}; ${path}): stop it first, or give this one its own --data-dir`);
      }
      // Stale: its process is gone. Removed and tried again (another starter racing for it gets EEXIST and looks again).
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOENT") throw e;
      }
    }
  } finally {
    unlinkSync(temp);
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      const holder = readHolder(path);
      if (holder?.pid === me.pid && holder.started === me.started) unlinkSync(path);
    },
  };
}
