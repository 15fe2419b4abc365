// The file object as the API returns it (OpenAI's shape), as a typebox schema (validator and OpenAPI) and its type.
import { t } from "elysia";
import type { FileRow } from "../db/files-repo.ts";

/** What an upload's `purpose` may say (OpenAI's list). */
export const PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"] as const;

export const FileObject = t.Object(
  {
    id: t.String({ description: "file- and 32 hex characters" }),
    object: t.Literal("file"),
    bytes: t.Integer({ description: "Size of the file in bytes" }),
    created_at: t.Integer({ description: "Unix seconds when the upload completed" }),
    filename: t.String({ description: "The name the client sent with the file" }),
    purpose: t.String({ description: PURPOSES.join(" | ") }),
    status: t.String({ description: "processed: the file is stored whole (an upload that fails leaves no file, so there is no other status yet)" }),
  },
  {
    examples: [{ id: "file-4f0c8d1e2b3a49c6a7d5e8f9012b3c4d", object: "file", bytes: 120_000, created_at: 1_767_225_600, filename: "notes.pdf", purpose: "user_data", status: "processed" }],
  },
);

export function toFileObject(row: FileRow): typeof FileObject.static {
  return { id: row.id, object: "file", bytes: row.bytes, created_at: row.createdAt, filename: row.filename, purpose: row.purpose, status: row.status };
}
