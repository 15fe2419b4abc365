// Makes a new directory entry (a created, renamed or removed file) durable by syncing its directory, for the
// settlement journal and the file storage alike.
import { closeSync, fsyncSync, openSync } from "node:fs";

/**
 * Syncs `dir` (`fsync` is injectable for tests). A filesystem that cannot, or a sync that fails, is left as it is:
 * the file's own data is synced all the same, and the write it follows has happened, so failing it would only
 * leave that write behind unaccounted for.
 */
export function syncDir(dir: string, fsync: (fd: number) => void = fsyncSync): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, "r");
    fsync(fd);
  } catch {
    // Some filesystems refuse to sync a directory; an error here does not undo the rename or append before it.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
