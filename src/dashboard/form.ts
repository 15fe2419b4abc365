// Reads a dashboard form post: an application/x-www-form-urlencoded body of at most 64 KiB (the largest form is a
// key's restrictions), read from the stream the edge handed over, under a deadline.
import { streamedBody } from "../http/edge.ts";
import { pumpStream } from "../http/body-reader.ts";
import { ApiError } from "../errors/api-error.ts";
import { PageError } from "./page-error.ts";

export const MAX_FORM_BYTES = 64 * 1024;
const FORM_TIMEOUT_MS = 30_000;

export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  const stream = streamedBody(request);
  if (type !== "application/x-www-form-urlencoded") {
    await stream?.cancel().catch(() => {});
    throw new PageError(415, "Unsupported form", "The dashboard takes its forms as application/x-www-form-urlencoded.");
  }
  if (!stream) return new URLSearchParams();
  const chunks: Uint8Array[] = [];
  try {
    await pumpStream(stream, { maxBytes: MAX_FORM_BYTES, timeoutMs: FORM_TIMEOUT_MS }, (c) => void chunks.push(c));
  } catch (e) {
    if (e instanceof ApiError) throw new PageError(e.status, "Form not received", e.message);
    throw e;
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** A trimmed text field, or "" when absent. */
export const field = (form: URLSearchParams, name: string) => (form.get(name) ?? "").trim();
