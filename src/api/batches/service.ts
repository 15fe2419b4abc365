// The Batch API's logic: create (the input file checked, the batch written validating and run here), retrieve, list
// and cancel, always scoped to the caller's team.
import type { AppDeps } from "../../app-deps.ts";
import type { AuthContext } from "../../auth/authenticate.ts";
import { type BatchRow, findBatch, insertBatch, lineCounts, moveBatch, pageBatches } from "../../db/batches-repo.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import { teamFile } from "../../files/team-file.ts";
import { toBatchObject } from "./object.ts";
import { batchRunner } from "./runner.ts";
import { type BatchList, type BatchObject, type CreateBatchBody, DEFAULT_LIST_LIMIT } from "./schema.ts";
import { MAX_BATCH_FILE_BYTES, oversizeFile } from "./validate.ts";

/** The completion window, the only one: a batch not done 24 h after its creation ends expired. */
export const WINDOW_S = 24 * 60 * 60;

const nowS = () => Math.floor(Date.now() / 1000);
const newBatchId = () => `batch_${crypto.randomUUID().replace(/-/g, "")}`;

function batchNotFound(id: string): ApiError {
  return new ApiError(404, "invalid_request_error", `No batch found with id '${clip(id)}'.`, "batch_not_found", "batch_id");
}

async function withCounts(deps: AppDeps, rows: BatchRow[]): Promise<BatchObject[]> {
  const counts = await lineCounts(deps.db, rows.map((r) => r.id));
  return rows.map((r) => toBatchObject(r, counts.get(r.id)!));
}

async function teamBatch(deps: AppDeps, teamId: number, id: string): Promise<BatchRow> {
  const row = await findBatch(deps.db, id, teamId);
  if (!row) throw batchNotFound(id);
  return row;
}

export async function createBatch(deps: AppDeps, body: CreateBatchBody, auth: AuthContext): Promise<BatchObject> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const file = await teamFile(deps.db, auth.teamId, body.input_file_id, "input_file_id");
  if (file.purpose !== "batch") {
    throw ApiError.badRequest(`The file '${file.id}' was uploaded with purpose '${clip(file.purpose)}'; a batch's input file must have purpose 'batch'.`, "input_file_id", "invalid_file_purpose");
  }
  if (file.bytes > MAX_BATCH_FILE_BYTES) throw oversizeFile(file.bytes);
  const createdAt = nowS();
  const row = await insertBatch(deps.db, {
    id: newBatchId(), teamId: auth.teamId, keyId: auth.keyId, endpoint: body.endpoint, inputFileId: file.id, completionWindow: body.completion_window,
    status: "validating", metadataJson: body.metadata ? JSON.stringify(body.metadata) : null, createdAt, expiresAt: createdAt + WINDOW_S,
    leaseOwner: deps.live.replica, leaseEpoch: 1,
  }, deps.config.leaseMs);
  batchRunner(deps).adopt(row);
  return toBatchObject(row, { done: 0, failed: 0 });
}

export async function retrieveBatch(deps: AppDeps, teamId: number, id: string): Promise<BatchObject> {
  return (await withCounts(deps, [await teamBatch(deps, teamId, id)]))[0]!;
}

export async function listBatches(deps: AppDeps, teamId: number, q: { after?: string; limit?: number }): Promise<typeof BatchList.static> {
  const page = await pageBatches(deps.db, teamId, { after: q.after ?? null, limit: q.limit ?? DEFAULT_LIST_LIMIT });
  if (!page) throw ApiError.badRequest(`No batch with id '${clip(q.after!)}' to list after.`, "after");
  const data = await withCounts(deps, page.rows);
  return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
}

/** Cancels a validating or running batch (cancelling now, cancelled once its running lines stopped); one already ending is returned as it is. */
export async function cancelBatch(deps: AppDeps, teamId: number, id: string): Promise<BatchObject> {
  const row = await teamBatch(deps, teamId, id);
  if (["failed", "completed", "expired", "cancelled"].includes(row.status)) {
    throw ApiError.badRequest(`The batch '${row.id}' is ${row.status}; only a batch that is validating or in progress can be cancelled.`, "batch_id");
  }
  if (await moveBatch(deps.db, row.id, ["validating", "in_progress"], { status: "cancelling", cancellingAt: nowS() })) batchRunner(deps).wake(row.id);
  return await retrieveBatch(deps, teamId, id);
}
