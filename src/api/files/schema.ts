// typebox schemas of the Files API (OpenAI-compatible): the upload form, the list query and the answers.
import { t } from "elysia";
import { FileObject, PURPOSES } from "../../files/file-object.ts";

export { FileObject };

/** Most files one page lists, and the default (as OpenAI's files list). */
export const MAX_LIST_LIMIT = 10_000;

const Purpose = t.Union(PURPOSES.map((p) => t.Literal(p)), { error: `purpose must be one of ${PURPOSES.join(", ")}`, description: PURPOSES.join(" | ") });

/** The multipart form of POST /v1/files, for the OpenAPI document (the route reads the body itself, streaming). */
export const UploadForm = t.Object({
  file: t.String({ format: "binary", description: "The file's bytes (a part with a filename); the size limit is KILN_MAX_FILE_BYTES, 1 GiB by default" }),
  purpose: Purpose,
}, { required: ["file", "purpose"] });

export const FileId = t.Object({ id: t.String({ description: "A file id (file-…) of your team." }) });

export const ListQuery = t.Object({
  // Checked by the service, not here: a bad order is a text/plain 400 (as the spec says), not the JSON error.
  order: t.Optional(t.String({ description: "desc (default): newest first; asc: oldest first (by created_at, then upload order)" })),
  after: t.Optional(t.String({ description: "A file id: the page starts after it, in the chosen order" })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, error: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`, description: `1–${MAX_LIST_LIMIT}, default ${MAX_LIST_LIMIT}` })),
  purpose: t.Optional(Purpose),
});

export const FileList = t.Object({
  object: t.Literal("list"),
  data: t.Array(FileObject),
  first_id: t.Union([t.String(), t.Null()]),
  last_id: t.Union([t.String(), t.Null()]),
  has_more: t.Boolean(),
});

export const DeletedFile = t.Object({ id: t.String(), object: t.Literal("file"), deleted: t.Literal(true) });
