// What the request formats call to read a file a request names by file_id (media to decode, a text document): the
// caller's team's file, opened from its row under the caller's size bound, so its size is known before any byte is
// read; then its first bytes by a ranged read, and only if wanted the whole file, streamed into one buffer.
import type { Db } from "../db/client.ts";
import { ApiError, clip, formatBytes } from "../errors/api-error.ts";
import { type FileObject, toFileObject } from "./file-object.ts";
import type { FileStorage, StoredFile } from "./storage.ts";
import { openTeamFile, teamFile } from "./team-file.ts";

export interface TeamFileRead {
  file: typeof FileObject.static;
  /** The stored size, from the storage's own record (a stat or HEAD): no byte read. */
  size: number;
  /** The first `n` bytes (all of a shorter file), by a ranged read. */
  head(n: number): Promise<Uint8Array>;
  /** The whole file, streamed into one buffer of its size; the event loop runs between chunks. */
  bytes(signal?: AbortSignal): Promise<Uint8Array>;
}

/**
 * File `fileId` of team `teamId`, opened but not read. Throws ApiError 404 file_not_found for an id that is not the
 * team's (unknown, deleted, malformed or another team's), and 400 when the file is larger than `maxBytes`; both name
 * `param` (the request item that referenced the file, e.g. `input[0].content[1].file_id`). A file deleted while it
 * is being read is the same 404.
 */
export async function readTeamFile(
  deps: { db: Db; files: FileStorage },
  teamId: number,
  fileId: string,
  maxBytes: number,
  param = "file_id",
): Promise<TeamFileRead> {
  const { row, stored } = await openTeamFile(deps, teamId, fileId, param);
  // Refused before any byte is read.
  if (stored.size > maxBytes) throw ApiError.badRequest(`File '${clip(fileId)}' is larger than the ${formatBytes(maxBytes)} this input may take.`, param);
  const deletedIsNotFound = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (e) {
      await teamFile(deps.db, teamId, fileId, param);
      throw e;
    }
  };
  return {
    file: toFileObject(row),
    size: stored.size,
    head: (n) => deletedIsNotFound(() => stored.slice(0, Math.min(n, stored.size))),
    bytes: (signal) => deletedIsNotFound(() => readWhole(stored, signal)),
  };
}

/** Every byte of `stored`, copied chunk by chunk into a buffer of its size (never more: a longer stream is a fault). */
export async function readWhole(stored: StoredFile, signal?: AbortSignal): Promise<Uint8Array> {
  const out = new Uint8Array(stored.size);
  const reader = stored.stream().getReader();
  let at = 0;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      if (at + value.byteLength > out.byteLength) throw new Error(`stored file is longer than its ${stored.size} bytes`);
      out.set(value, at);
      at += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  if (at !== out.byteLength) throw new Error(`stored file ended after ${at} of its ${stored.size} bytes`);
  return out;
}
