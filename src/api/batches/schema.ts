// typebox schemas of the Batch API (OpenAI-compatible): the create body, the list query and the batch object.
import { t } from "elysia";

/** The endpoints a batch's lines may call. */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"] as const;
export type BatchEndpointPath = (typeof BATCH_ENDPOINTS)[number];

/** Most batches one page lists, and the default (as the compatible format). */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 20;

const Metadata = t.Union(
  [
    t.Record(t.String(), t.String({ maxLength: 512 }), { maxProperties: 16, error: "metadata must be an object of at most 16 string values of up to 512 characters" }),
    t.Null(),
  ],
  { description: "Up to 16 key-value pairs of strings (values up to 512 characters)" },
);

export const CreateBatchBody = t.Object({
  input_file_id: t.String({ description: "A file of your team uploaded with purpose `batch`: JSONL, one request per line" }),
  endpoint: t.Union([t.Literal("/v1/chat/completions"), t.Literal("/v1/responses"), t.Literal("/v1/embeddings"), t.Literal("/v1/completions")], { error: `endpoint must be one of ${BATCH_ENDPOINTS.join(", ")}`, description: BATCH_ENDPOINTS.join(" | ") }),
  completion_window: t.Literal("24h", { error: 'completion_window must be "24h"', description: "24h, the only window" }),
  metadata: t.Optional(Metadata),
});
export type CreateBatchBody = typeof CreateBatchBody.static;

export const BatchId = t.Object({ id: t.String({ description: "A batch id (batch_…) of your team." }) });

export const ListQuery = t.Object({
  after: t.Optional(t.String({ description: "A batch id: the page starts after it (older batches)" })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, error: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`, description: `1–${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}` })),
});

const Time = t.Union([t.Integer(), t.Null()]);
const FileRef = t.Union([t.String(), t.Null()]);

export const BatchError = t.Object({
  code: t.String(),
  line: t.Union([t.Integer(), t.Null()], { description: "1-based line of the input file" }),
  message: t.String(),
  param: t.Union([t.String(), t.Null()]),
});

export const BatchObject = t.Object({
  id: t.String({ description: "batch_ and 32 hex characters" }),
  object: t.Literal("batch"),
  endpoint: t.String(),
  errors: t.Union([t.Object({ object: t.Literal("list"), data: t.Array(BatchError) }), t.Null()]),
  input_file_id: t.String(),
  completion_window: t.String(),
  status: t.Union([
    t.Literal("validating"), t.Literal("failed"), t.Literal("in_progress"), t.Literal("finalizing"),
    t.Literal("completed"), t.Literal("expired"), t.Literal("cancelling"), t.Literal("cancelled"),
  ]),
  output_file_id: FileRef,
  error_file_id: FileRef,
  created_at: t.Integer(),
  in_progress_at: Time,
  expires_at: Time,
  finalizing_at: Time,
  completed_at: Time,
  failed_at: Time,
  expired_at: Time,
  cancelling_at: Time,
  cancelled_at: Time,
  request_counts: t.Object({ total: t.Integer(), completed: t.Integer(), failed: t.Integer() }),
  metadata: t.Union([t.Record(t.String(), t.String()), t.Null()]),
});
export type BatchObject = typeof BatchObject.static;

export const BatchList = t.Object({
  object: t.Literal("list"),
  data: t.Array(BatchObject),
  first_id: t.Union([t.String(), t.Null()]),
  last_id: t.Union([t.String(), t.Null()]),
  has_more: t.Boolean(),
});
