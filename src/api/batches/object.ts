// The batch object as the API returns it, from its row and its lines' counts. Pure.
import type { BatchRow } from "../../db/batches-repo.ts";
import type { BatchObject } from "./schema.ts";
import type { LineIssue } from "./validate.ts";

export function toBatchObject(row: BatchRow, counts: { done: number; failed: number }): BatchObject {
  const errors = row.errorsJson ? (JSON.parse(row.errorsJson) as LineIssue[]) : null;
  return {
    id: row.id,
    object: "batch",
    endpoint: row.endpoint,
    errors: errors ? { object: "list", data: errors } : null,
    input_file_id: row.inputFileId,
    completion_window: row.completionWindow,
    status: row.status as BatchObject["status"],
    output_file_id: row.outputFileId,
    error_file_id: row.errorFileId,
    created_at: row.createdAt,
    in_progress_at: row.inProgressAt,
    expires_at: row.expiresAt,
    finalizing_at: row.finalizingAt,
    completed_at: row.completedAt,
    failed_at: row.failedAt,
    expired_at: row.expiredAt,
    cancelling_at: row.cancellingAt,
    cancelled_at: row.cancelledAt,
    request_counts: { total: row.total, completed: counts.done, failed: counts.failed },
    metadata: row.metadataJson ? (JSON.parse(row.metadataJson) as Record<string, string>) : null,
  };
}
