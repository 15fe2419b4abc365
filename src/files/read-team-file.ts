// What the request formats call to read a file a request names by file_id (media to decode): the caller's team's
// file, whole, in memory, under the caller's size bound.
import type { Db } from "../db/client.ts";
import { ApiError, clip, formatBytes } from "../errors/api-error.ts";
import { type FileObject, toFileObject } from "./file-object.ts";
import type { FileStorage } from "./storage.ts";
import { openTeamFile, teamFile } from "./team-file.ts";

export interface TeamFileRead {
  file: typeof FileObject.static;
  bytes: Uint8Array;
}

/**
 * The bytes of file `fileId` of team `teamId`. Throws ApiError 404 file_not_found for an id that is not the team's
 * (unknown, deleted, malformed or another team's), and 400 when the file is larger than `maxBytes`; both name
 * `param` (the request item that referenced the file, e.g. `input[0].content[1].file_id`).
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
  try {
    return { file: toFileObject(row), bytes: await stored.bytes() };
  } catch (e) {
    // Deleted while it was being read: a 404 like any deleted file.
    await teamFile(deps.db, teamId, fileId, param);
    throw e;
  }
}
