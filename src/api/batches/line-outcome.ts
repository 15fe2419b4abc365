// What becomes of one line's run: its answer or its error as the line of the output or error file, a wait and a retry
// (a rate limit or a full queue: waiting is all they ask), or back to pending (the server drains, or the batch stops
// here: cancelled, expired, or taken over by another replica). Pure, with the line's ids derived from the batch and
// the line, so a line run again settles under the same request id (one usage row, one charge).
import { createHash } from "node:crypto";
import { ApiError } from "../../errors/api-error.ts";

export interface LineIds {
  /** The request id its usage row is settled under. */
  requestId: string;
  /** The output line's id (batch_req_…). */
  id: string;
}

export function lineIds(batchId: string, line: number): LineIds {
  const hex = createHash("sha256").update(`${batchId}:${line}`).digest("hex").slice(0, 32);
  return { requestId: `req_${hex}`, id: `batch_req_${hex}` };
}

export type LineOutcome =
  | { kind: "done" | "failed"; result: OutputLine }
  | { kind: "retry"; afterMs: number }
  | { kind: "release" };

export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/** A retry waits at least this long, and at most MAX_RETRY_MS whatever Retry-After says. */
export const MIN_RETRY_MS = 250;
export const MAX_RETRY_MS = 30_000;

const RETRIED_503 = new Set(["service_overloaded", "backend_unavailable"]);

function retryMs(err: ApiError): number {
  const ms = Number(err.headers["retry-after-ms"] ?? Number(err.headers["retry-after"] ?? 1) * 1000);
  return Math.min(MAX_RETRY_MS, Math.max(MIN_RETRY_MS, Number.isFinite(ms) ? ms : 1000));
}

/**
 * The outcome of a line whose run answered `answer` or threw `error`; `stopping`: the batch stops here (a cut-short
 * run goes back to pending, to be run by whoever continues the batch, or listed as not run).
 */
export function lineOutcome(run: { answer: unknown } | { error: unknown }, ids: LineIds, customId: string, stopping: boolean): LineOutcome {
  const line = (status_code: number, body: unknown): OutputLine => ({ id: ids.id, custom_id: customId, response: { status_code, request_id: ids.requestId, body }, error: null });
  if ("answer" in run) {
    if (run.answer instanceof Response) return { kind: "failed", result: line(500, ApiError.internal().toBody()) };
    return { kind: "done", result: line(200, run.answer) };
  }
  const err = run.error instanceof ApiError ? run.error : ApiError.internal();
  if (stopping || err.status === 499 || err.code === "server_shutting_down") return { kind: "release" };
  if (err.status === 429 || (err.status === 503 && err.code !== null && RETRIED_503.has(err.code))) return { kind: "retry", afterMs: retryMs(err) };
  return { kind: "failed", result: line(err.status, err.toBody()) };
}

/** The error-file line of a request the batch never ran (it was cancelled or expired first). */
export function notRunLine(ids: LineIds, customId: string, code: "batch_cancelled" | "batch_expired"): OutputLine {
  const message = code === "batch_expired" ? "This request could not be executed before the completion window expired." : "This request was not executed because the batch was cancelled.";
  return { id: ids.id, custom_id: customId, response: null, error: { code, message } };
}
