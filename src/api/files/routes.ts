// POST /v1/files (a streamed multipart upload), GET /v1/files, GET and DELETE /v1/files/{id}, and
// GET /v1/files/{id}/content.
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { streamedBody } from "../../http/edge.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { DeletedFile, FileId, FileList, FileObject, ListQuery, UploadForm } from "./schema.ts";
import { fileContent, listFiles, listOrder, removeFile, retrieveFile, uploadFile } from "./service.ts";

const errors = { 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 408: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody };

export function filesRoutes(deps: AppDeps) {
  return new Elysia({ name: "files" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post("/v1/files", ({ request, auth }) => uploadFile(deps, streamedBody(request), request.headers, auth), {
      // The key is checked before the body is read (then a declared length past the limit); the route streams the body to storage itself.
      edge: POLICY.keyedUpload,
      response: { 200: FileObject, ...errors },
      detail: {
        summary: "Upload a file",
        description:
          "multipart/form-data with the fields `file` and `purpose` (in either order). The file streams to storage as it arrives; " +
          "it is stored whole or not at all, and its row is written only then. A file larger than the limit (KILN_MAX_FILE_BYTES, 1 GiB by default) is a 400.",
        requestBody: { required: true, content: { "multipart/form-data": { schema: UploadForm } } },
        tags: ["Files"],
      },
    })
    .get("/v1/files", async ({ query, auth }) => (await listFiles(deps, auth.teamId, query)) as typeof FileList.static, {
      edge: POLICY.keyed,
      query: ListQuery,
      // A bad order is the text/plain 400 whatever else is wrong with the query: the rest of it is dropped before the
      // schema sees it, and the handler gives that answer.
      transform: (c) => {
        if (!listOrder(c.query.order)) c.query = { order: c.query.order };
      },
      response: { 200: FileList, ...errors },
      detail: {
        summary: "List files",
        description: "The team's files, newest first by default. An order other than asc or desc is a 400 with a text/plain body (not the JSON error).",
        tags: ["Files"],
      },
    })
    .get("/v1/files/:id", ({ params, auth }) => retrieveFile(deps, auth.teamId, params.id), {
      edge: POLICY.keyed,
      params: FileId,
      response: { 200: FileObject, ...errors },
      detail: { summary: "Retrieve a file", description: "An unknown, deleted or other team's id is a 404 file_not_found.", tags: ["Files"] },
    })
    .get("/v1/files/:id/content", ({ params, auth }) => fileContent(deps, auth.teamId, params.id), {
      edge: POLICY.keyed,
      params: FileId,
      detail: {
        summary: "Download a file's bytes",
        description: "The bytes as uploaded, streamed, as application/octet-stream: with their Content-Length from disk, chunked from an S3 store.",
        responses: { 200: { description: "The file's bytes", content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } } },
        tags: ["Files"],
      },
    })
    .delete("/v1/files/:id", ({ params, auth }) => removeFile(deps, auth.teamId, params.id), {
      edge: POLICY.keyed,
      params: FileId,
      response: { 200: DeletedFile, ...errors },
      detail: { summary: "Delete a file", description: "Removes the file's row and its bytes.", tags: ["Files"] },
    });
}
