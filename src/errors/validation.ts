// Turns a schema validation failure into the spec's 400 body: dotted param path and a message a person can act on.
import { ValueErrorType } from "@sinclair/typebox/errors";
import { ApiError, clip } from "./api-error.ts";

export interface SchemaIssue {
  /** JSON pointer of the failing value, e.g. "/messages/0/content". */
  path: string;
  /** typebox's message, e.g. "Expected string". */
  message: string;
  /** The failing schema, when known; a custom `error` string on it wins over typebox's wording. */
  schema?: { error?: unknown; [k: string]: unknown };
  value?: unknown;
  /** typebox's ValueErrorType, when known. */
  type?: number;
  /** A union's failure: one error iterator per variant (typebox's ValueError.errors). */
  errors?: { First(): SchemaIssue | undefined }[];
}

const depth = (pointer: string) => pointer.split("/").length;

/**
 * The issue to report: a union that failed on an array (a list of items, such as `input`) is reported where its
 * best-fitting variant failed deepest (`input.3.content`, not `input`), so the client learns which item and field
 * are wrong; on anything else the union's own message (which lists the accepted forms) stays.
 */
export function deepestIssue(issue: SchemaIssue): SchemaIssue {
  if (!Array.isArray(issue.value)) return issue;
  let best = issue;
  for (const variant of issue.errors ?? []) {
    const first = variant.First();
    if (!first) continue;
    const inner = deepestIssue(first);
    if (depth(inner.path) > depth(best.path)) best = inner;
  }
  return best;
}


/** "/messages/0/content" → "messages.0.content"; the root is null. */
export function pointerToParam(pointer: string): string | null {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  return parts.length && parts.some(Boolean) ? parts.join(".") : null;
}

export function issueToApiError(reported: SchemaIssue): ApiError {
  const issue = deepestIssue(reported);
  // Object keys come from the client: a long one is not echoed back whole.
  const full = pointerToParam(issue.path);
  const param = full === null ? null : clip(full, 128);
  const custom = typeof issue.schema?.error === "string" ? issue.schema.error : null;
  if (!param) return ApiError.badRequest(custom ?? `Invalid request body: ${lowerFirst(issue.message)}`);
  // Endpoints that refuse fields they do not declare (the images endpoints) name the field, as the spec asks.
  if (issue.type === ValueErrorType.ObjectAdditionalProperties) return ApiError.badRequest(`Unrecognized request argument supplied: ${param}`, param);
  if (issue.value === undefined) {
    return ApiError.badRequest(`Missing required parameter: '${param}'.`, param);
  }
  if (custom) return ApiError.badRequest(custom, param);
  const forms = unionForms(issue.schema);
  if (forms) return ApiError.badRequest(`Invalid value for '${param}': expected ${forms}.`, param);
  return ApiError.badRequest(`Invalid value for '${param}': ${lowerFirst(issue.message)}.`, param);
}

/** A union's accepted forms in words ("string, array or null"), when each variant names its type; else null. */
function unionForms(schema: SchemaIssue["schema"]): string | null {
  const variants = schema?.anyOf;
  if (!Array.isArray(variants)) return null;
  const types = [...new Set(variants.flatMap((v: { anyOf?: unknown; type?: unknown }) => (Array.isArray(v.anyOf) ? v.anyOf.map((w: { type?: unknown }) => w.type) : [v.type])))];
  if (!types.length || types.some((t) => typeof t !== "string")) return null;
  return types.length === 1 ? String(types[0]) : `${types.slice(0, -1).join(", ")} or ${types[types.length - 1]}`;
}

function lowerFirst(s: string) {
  return s ? s[0]!.toLowerCase() + s.slice(1) : s;
}
