// The Files API's logic: upload (streamed to the file storage, the row written once the bytes are durable), list,
// retrieve, download and delete, always scoped to the caller's team.
import type { AppDeps } from "../../app-deps.ts";
import type { AuthContext } from "../../auth/authenticate.ts";
import { deleteFile, insertFile, pageFiles } from "../../db/files-repo.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import { newFileId } from "../../files/file-id.ts";
import { PURPOSES, toFileObject } from "../../files/file-object.ts";
import { fileNotFound, openTeamFile, teamFile } from "../../files/team-file.ts";
import { receiveUpload, refuseDeclaredOversize } from "../../files/upload.ts";
import { MAX_LIST_LIMIT, type FileList, type FileObject } from "./schema.ts";

const nowS = () => Math.floor(Date.now() / 1000);

/** purpose, once sent, must be one of the list, and must have been sent once the form is `complete`. */
export function checkUploadFields(fields: Map<string, string>, complete: boolean): void {
  const purpose = fields.get("purpose");
  if (purpose === undefined) {
    if (complete) throw ApiError.badRequest("Missing required parameter: 'purpose'.", "purpose");
    return;
  }
  if (!(PURPOSES as readonly string[]).includes(purpose)) {
    throw ApiError.badRequest(`Invalid value for 'purpose': '${clip(purpose)}'. Expected one of ${PURPOSES.join(", ")}.`, "purpose");
  }
}

/** Stores the uploaded file under a new id, then writes its row; a refusal or a failure leaves neither. */
export async function uploadFile(deps: AppDeps, body: ReadableStream<Uint8Array> | null, headers: Headers, auth: AuthContext): Promise<typeof FileObject.static> {
  refuseDeclaredOversize(headers, deps.config.maxFileBytes);
  const id = newFileId();
  const upload = await receiveUpload(
    body, headers.get("content-type"), { maxFileBytes: deps.config.maxFileBytes, timeoutMs: deps.config.uploadTimeoutMs, fileField: "file", stop: deps.shutdown.drainStarted },
    (stream) => deps.files.put(id, stream), checkUploadFields,
  );
  try {
    const row = await insertFile(deps.db, {
      id, teamId: auth.teamId, keyId: auth.keyId, filename: upload.file.filename ?? "file", purpose: upload.fields.get("purpose")!, bytes: upload.bytes, createdAt: nowS(),
    });
    deps.metrics.fileUploaded(upload.bytes);
    return toFileObject(row);
  } catch (e) {
    await deps.files.delete(id);
    throw e;
  }
}

/** The list's order ("desc" when none is given), or null for anything but asc or desc. */
export function listOrder(order: string | undefined): "asc" | "desc" | null {
  if (order === undefined) return "desc";
  return order === "asc" || order === "desc" ? order : null;
}

/** A text/plain 400: what GET /v1/files answers for an order other than asc or desc (the spec's one exception). */
function badOrder(order: string): Response {
  return new Response(`Invalid value for 'order': '${clip(order)}'. Expected 'asc' or 'desc'.`, { status: 400, headers: { "content-type": "text/plain; charset=utf-8" } });
}

export interface ListQuery {
  order?: string;
  after?: string;
  limit?: number;
  purpose?: string;
}

export async function listFiles(deps: AppDeps, teamId: number, q: ListQuery): Promise<typeof FileList.static | Response> {
  const order = listOrder(q.order);
  if (!order) return badOrder(q.order!);
  const page = await pageFiles(deps.db, teamId, { order, after: q.after ?? null, limit: q.limit ?? MAX_LIST_LIMIT, purpose: q.purpose ?? null });
  if (!page) throw ApiError.badRequest(`No file with id '${clip(q.after!)}' to list after.`, "after");
  const data = page.rows.map(toFileObject);
  return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
}

export async function retrieveFile(deps: AppDeps, teamId: number, id: string): Promise<typeof FileObject.static> {
  return toFileObject(await teamFile(deps.db, teamId, id));
}

/** The file's bytes, streamed from the storage (from disk with their Content-Length; see StoredFile.body). */
export async function fileContent(deps: AppDeps, teamId: number, id: string): Promise<Response> {
  const { stored } = await openTeamFile(deps, teamId, id);
  return new Response(stored.body(), { headers: { "content-type": "application/octet-stream" } });
}

/** Deletes the row, then the bytes: a crash between the two leaves bytes no row names, which the start-up sweep removes. */
export async function removeFile(deps: AppDeps, teamId: number, id: string): Promise<{ id: string; object: "file"; deleted: true }> {
  const row = await teamFile(deps.db, teamId, id);
  // A delete of the same file that won the race: this one finds nothing to delete.
  if (!(await deleteFile(deps.db, row.id, teamId))) throw fileNotFound(id, "file_id");
  await deps.files.delete(row.id);
  deps.metrics.fileDeleted();
  return { id: row.id, object: "file", deleted: true };
}
