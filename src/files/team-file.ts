// Finds a file of the caller's team by id: a malformed, unknown, deleted or other team's id is the same 404.
import type { Db } from "../db/client.ts";
import { type FileRow, findFile } from "../db/files-repo.ts";
import { ApiError, clip } from "../errors/api-error.ts";
import { isFileId } from "./file-id.ts";
import type { FileStorage, StoredFile } from "./storage.ts";

export function fileNotFound(id: string, param: string): ApiError {
  return new ApiError(404, "invalid_request_error", `No such File object: ${clip(id)}`, "file_not_found", param);
}

/** The team's file row; 404 file_not_found (naming `param`) for anything else. */
export async function teamFile(db: Db, teamId: number, id: string, param = "file_id"): Promise<FileRow> {
  const row = isFileId(id) ? await findFile(db, id, teamId) : undefined;
  if (!row) throw fileNotFound(id, param);
  return row;
}

/** The team's file row and its stored bytes; 404 as teamFile. */
export async function openTeamFile(deps: { db: Db; files: FileStorage }, teamId: number, id: string, param = "file_id"): Promise<{ row: FileRow; stored: StoredFile }> {
  const row = await teamFile(deps.db, teamId, id, param);
  const stored = await deps.files.get(row.id);
  if (stored) return { row, stored };
  // Deleted between the two lookups: a 404 like any deleted file. A row whose bytes are missing is a fault.
  await teamFile(deps.db, teamId, id, param);
  throw new Error(`file ${row.id} has a row but no stored bytes`);
}
