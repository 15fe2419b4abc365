// Up-front validation of a batch's input file: each non-blank JSONL line must be `{custom_id, method: "POST", url,
// body}` with the batch's endpoint as url, a custom_id unique within the file, no `stream: true`, and a body the
// endpoint itself would accept (checked by the family's own schema and validator). Pure: the caller hands in the
// body check and writes the outcome.
import { ApiError, clip } from "../../errors/api-error.ts";
import type { NewLine } from "../../db/batches-repo.ts";

/** Most requests one batch may hold (as the compatible format). */
export const MAX_BATCH_LINES = 50_000;
/** Largest input file a batch may name (the compatible format's 200 MB, read as MiB). */
export const MAX_BATCH_FILE_BYTES = 200 * 1024 * 1024;
/** A file with more bad lines than this names only the first ones. */
export const MAX_REPORTED_ERRORS = 100;

export interface LineIssue {
  /** 1-based line of the file; null for the file as a whole. */
  line: number | null;
  code: string;
  message: string;
  param: string | null;
}

export type ParsedInput = { ok: true; lines: NewLine[] } | { ok: false; errors: LineIssue[] };

/** A body the endpoint would refuse: its error (as the endpoint answers it), or null when it would accept it. */
export type BodyCheck = (body: Record<string, unknown>) => ApiError | null;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The issue of one parsed line, or null when it is a request the batch can run. */
export function lineIssue(raw: unknown, line: number, endpoint: string, seen: Set<string>, check: BodyCheck): LineIssue | null {
  const issue = (code: string, message: string, param: string | null) => ({ line, code, message, param });
  if (!isObject(raw)) return issue("invalid_request", "Each line must be a JSON object with custom_id, method, url and body.", null);
  const { custom_id: customId, method, url, body } = raw;
  if (typeof customId !== "string" || !customId) return issue("missing_required_parameter", "Missing required parameter: 'custom_id' (a non-empty string).", "custom_id");
  if (seen.has(customId)) return issue("duplicate_custom_id", `The custom_id '${clip(customId)}' is used by an earlier line; each line's custom_id must be unique within the file.`, "custom_id");
  seen.add(customId);
  if (method !== "POST") return issue("invalid_request", "Invalid value for 'method': expected \"POST\".", "method");
  if (url !== endpoint) {
    const shown = typeof url === "string" ? `'${clip(url)}'` : "missing";
    return issue("invalid_url", `The url ${shown} does not match the batch's endpoint '${endpoint}'.`, "url");
  }
  if (!isObject(body)) return issue("invalid_request", "Invalid value for 'body': expected the endpoint's JSON request object.", "body");
  if (body.stream === true) return issue("invalid_request", "Streaming is not supported in batches: leave stream out or set it to false.", "body.stream");
  const refused = check(body);
  if (refused) return issue(refused.code ?? "invalid_request", refused.message, refused.param ? `body.${refused.param}` : "body");
  return null;
}

/** Parses and checks the whole file; `ok: false` names the bad lines (the first MAX_REPORTED_ERRORS of them). */
export function parseBatchInput(text: string, endpoint: string, check: BodyCheck): ParsedInput {
  const lines: NewLine[] = [];
  const errors: LineIssue[] = [];
  const seen = new Set<string>();
  const rows = text.split("\n");
  for (let i = 0; i < rows.length && errors.length < MAX_REPORTED_ERRORS; i++) {
    const row = rows[i]!.trim();
    if (!row) continue;
    const line = i + 1;
    if (lines.length + errors.length >= MAX_BATCH_LINES) {
      errors.push({ line, code: "too_many_requests", message: `A batch may hold at most ${MAX_BATCH_LINES} requests; this file has more. Split it into several batches.`, param: null });
      break;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(row);
    } catch {
      errors.push({ line, code: "invalid_json_line", message: "This line is not parseable as valid JSON.", param: null });
      continue;
    }
    const issue = lineIssue(raw, line, endpoint, seen, check);
    if (issue) errors.push(issue);
    else {
      const { custom_id, body } = raw as { custom_id: string; body: Record<string, unknown> };
      lines.push({ line, customId: custom_id, bodyJson: JSON.stringify(body) });
    }
  }
  if (!errors.length && !lines.length) errors.push({ line: null, code: "empty_file", message: "The input file has no requests.", param: null });
  return errors.length ? { ok: false, errors } : { ok: true, lines };
}

/** The refusal of an input file too large to validate, before it is read. */
export function oversizeFile(bytes: number): ApiError {
  return ApiError.badRequest(`The input file is ${bytes} bytes; a batch's input file may be at most ${MAX_BATCH_FILE_BYTES} bytes (200 MiB). Split it into several batches.`, "input_file_id");
}
