// The one place an error becomes an HTTP response: ApiError, Elysia's validation/parse/not-found codes, and crashes.
import { ApiError, type ErrorBody } from "./api-error.ts";
import { storageFaultOf } from "../fs/storage-fault.ts";
import { issueToApiError, type SchemaIssue } from "./validation.ts";

export interface RenderContext {
  requestId: string;
  /** Logs an unexpected exception with the request id; the client sees a sanitized 500. */
  logCrash(error: unknown): void;
}

/** Maps whatever was thrown on a matched route (or Elysia's own failure codes) to an ApiError; null = 404 empty. */
export function toApiError(code: string | number, error: unknown, ctx: RenderContext): ApiError | null {
  if (error instanceof ApiError) return error;
  switch (code) {
    case "NOT_FOUND":
      return null;
    case "PARSE":
      return ApiError.badRequest("The request body is not valid JSON. Send a JSON object with Content-Type: application/json.");
    case "VALIDATION": {
      const issue = (error as { valueError?: SchemaIssue }).valueError;
      return issue ? issueToApiError(issue) : ApiError.badRequest("The request does not match the expected schema.");
    }
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return ApiError.badRequest((error as Error).message);
  }
  ctx.logCrash(error);
  // A full or unwritable disk is not a bug in kiln: the client is told what failed, and that it may retry.
  const fault = storageFaultOf(error);
  return fault ? ApiError.storageFault(fault) : ApiError.internal();
}

/** A family's error body: the spec's error object, wrapped as its clients expect (identity for most families). */
export type ErrorEnvelope = (err: ApiError) => object;
export const specEnvelope: ErrorEnvelope = (err) => err.toBody();

export function errorResponse(err: ApiError | null, requestId: string, envelope: ErrorEnvelope = specEnvelope): Response {
  const headers: Record<string, string> = { "x-request-id": requestId };
  if (!err) return new Response(null, { status: 404, headers });
  return new Response(JSON.stringify(envelope(err)), {
    status: err.status,
    headers: { ...headers, ...err.headers, "content-type": "application/json" },
  });
}

/**
 * The error fields of a request's log line: the error object the client was sent, as its family's envelope wrote it
 * (type, code, param, message), so the operator sees why a client failed; never the request's body.
 */
export function errorLogFields(err: ApiError, envelope: ErrorEnvelope = specEnvelope): Record<string, string | null> {
  const { error } = envelope(err) as ErrorBody;
  return { error_type: error.type, error_code: error.code, error_param: error.param, error_message: error.message };
}
