// POST /v1/batches, GET /v1/batches, GET /v1/batches/{id} and POST /v1/batches/{id}/cancel (OpenAI's Batch API).
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { BATCH_ENDPOINTS, BatchId, BatchList, BatchObject, CreateBatchBody, ListQuery } from "./schema.ts";
import { cancelBatch, createBatch, listBatches, retrieveBatch } from "./service.ts";
import { MAX_BATCH_FILE_BYTES, MAX_BATCH_LINES } from "./validate.ts";

const errors = { 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody };

const CREATE =
  `Runs the requests of a JSONL file (uploaded with purpose \`batch\`; at most ${MAX_BATCH_LINES} lines and ${MAX_BATCH_FILE_BYTES / (1024 * 1024)} MiB), ` +
  `each line \`{custom_id, method: "POST", url, body}\` with url the batch's endpoint (${BATCH_ENDPOINTS.join(", ")}). ` +
  "The file is validated first (status validating): a line the endpoint would refuse, a url that is not the endpoint, a repeated custom_id or stream: true " +
  "fails the batch, and errors.data names each bad line. Then its lines run on the box's spare capacity in the batch lane (in_progress), each billed at most once; " +
  "the output file holds each answered line once, the error file each failed one, in input order, each with its custom_id.";

export function batchesRoutes(deps: AppDeps) {
  return new Elysia({ name: "batches" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post("/v1/batches", ({ body, auth }) => createBatch(deps, body, auth), {
      edge: POLICY.keyedJson,
      body: CreateBatchBody,
      // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
      parse: "json",
      response: { 200: BatchObject, ...errors },
      detail: { summary: "Create a batch", description: CREATE, tags: ["Batches"] },
    })
    .get("/v1/batches", ({ query, auth }) => listBatches(deps, auth.teamId, query), {
      edge: POLICY.keyed,
      query: ListQuery,
      response: { 200: BatchList, ...errors },
      detail: { summary: "List batches", description: "The team's batches, newest first, paginated with `after` (a batch id) and `limit` (1–100, default 20).", tags: ["Batches"] },
    })
    .get("/v1/batches/:id", ({ params, auth }) => retrieveBatch(deps, auth.teamId, params.id), {
      edge: POLICY.keyed,
      params: BatchId,
      response: { 200: BatchObject, ...errors },
      detail: { summary: "Retrieve a batch", description: "Its status, request_counts and, once it ended, its output and error files. An unknown or other team's id is a 404.", tags: ["Batches"] },
    })
    .post("/v1/batches/:id/cancel", ({ params, auth }) => cancelBatch(deps, auth.teamId, params.id), {
      // Clients send it without a body.
      edge: POLICY.keyed,
      params: BatchId,
      response: { 200: BatchObject, ...errors },
      detail: {
        summary: "Cancel a batch",
        description:
          "The batch goes cancelling at once: no new line starts and the running ones are stopped; then it ends cancelled, its output file holding what completed " +
          "and its error file the lines never run (code batch_cancelled). A batch that already ended is a 400.",
        tags: ["Batches"],
      },
    });
}
