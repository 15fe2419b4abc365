// Free space on the disk that holds kiln's data dir, against the reserve kept for what must always be writable there:
// usage rows and the settlement journal (a request whose usage could be recorded nowhere is refused, not served).
import { statfsSync } from "node:fs";

/** What uploads leave free, and below which SQLite's requests are refused: room for many usage rows and journal lines. */
export const STORAGE_RESERVE_BYTES = 8 * 1024 * 1024;

/** Bytes an unprivileged writer may still use on the filesystem holding `dir`; null when it cannot be asked. */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}

/** Whether the disk holding `dir` has less than `reserve` bytes free (false when that cannot be told). */
export function belowReserve(dir: string, reserve = STORAGE_RESERVE_BYTES, free: (dir: string) => number | null = freeBytes): boolean {
  const n = free(dir);
  return n !== null && n < reserve;
}
