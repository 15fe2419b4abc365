// The fixed, documented texts clients and GET /v1/status see when a model's workers or tokenizer fail; the raw detail
// (worker, ONNX Runtime, load and tokenizer error text, with its paths and stacks) goes only to the log.
import { ApiError, retryAfter } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";

/** Why a worker stopped serving its model (src/scheduler/supervisor.ts). */
export type WorkerCause = "load_failed" | "load_timeout" | "worker_lost" | "worker_hung" | "worker_restarted";

/** Why a model's backend failed; each cause has one fixed public text (README, "When a model fails"). */
export type FailureCause = WorkerCause | "generation_failed" | "render_retryable" | "render_failed" | "tokenizer_unavailable" | "tokenizer_timeout";

/** A failure as the main thread learns it: the cause, and the raw text that explains it, for the log only. */
export interface Failure<C extends FailureCause = FailureCause> {
  cause: C;
  detail: string;
}

/** Why a model is not operational, as /v1/status says it. */
export type HealthCause = WorkerCause | "tokenizer_unavailable" | "worker_starting" | "no_worker";

const REQUEST_TEXT: Record<FailureCause, (model: string) => string> = {
  load_failed: (m) => `The model '${m}' could not be loaded; retry later`,
  load_timeout: (m) => `The model '${m}' did not load in time; retry later`,
  worker_lost: () => "The model's worker failed; retry the request",
  worker_hung: () => "The model's worker stopped responding; retry the request",
  worker_restarted: () => "The model's worker was restarted; retry the request",
  generation_failed: () => "The model failed while generating; retry the request",
  render_retryable: () => "The image model produced an unusable image; retry the request",
  render_failed: () => "The server had an internal error while rendering the image",
  tokenizer_unavailable: (m) => `The tokenizer of '${m}' could not be loaded; retry later`,
  tokenizer_timeout: () => "Tokenizing the prompt took too long; retry the request",
};

const HEALTH_TEXT: Record<HealthCause, string> = {
  load_failed: "the model could not be loaded",
  load_timeout: "the model did not load in time",
  worker_lost: "a worker failed",
  worker_hung: "a worker stopped responding",
  worker_restarted: "a worker was restarted",
  tokenizer_unavailable: "the tokenizer could not be loaded",
  worker_starting: "a worker is starting",
  no_worker: "no worker is running",
};

/** The detail behind each error made here; kept beside the error, never on it, so nothing that serializes one shows it. */
const details = new WeakMap<ApiError, Failure>();

/** The error a request gets for a failure: fixed text, the code and status clients retry on (503 with Retry-After; 500 for a generation). */
export function failureError(failure: Failure, model: string): ApiError {
  const text = REQUEST_TEXT[failure.cause](model);
  const err = failure.cause === "generation_failed" ? new ApiError(500, "server_error", text) : ApiError.backendUnavailable(text);
  details.set(err, failure);
  return err;
}

/** Causes of a render's failure that a retry may not meet again: the model's own retryable report, a lost worker. */
const RETRYABLE_RENDER = new Set<FailureCause>(["render_retryable", "worker_lost", "worker_hung", "worker_restarted"]);

/**
 * The error an image render gets, decided here alone: what the image model reports as retryable (NaN output) and a
 * worker lost mid-denoise are 503 server_error with no code; any other render failure is a generic 500; a model
 * nothing serves, or its tokenizer, fails as text generation does (503 backend_unavailable).
 */
export function renderFailureError(failure: Failure, model: string): ApiError {
  if (failure.cause === "render_failed" || failure.cause === "generation_failed") {
    const err = new ApiError(500, "server_error", REQUEST_TEXT.render_failed(model));
    details.set(err, failure);
    return err;
  }
  if (!RETRYABLE_RENDER.has(failure.cause)) return failureError(failure, model);
  const text = failure.cause === "render_retryable" ? REQUEST_TEXT.render_retryable(model) : REQUEST_TEXT[failure.cause](model);
  const err = new ApiError(503, "server_error", text, null, null, retryAfter(1));
  details.set(err, failure);
  return err;
}

/** The failure behind an error made by failureError, or null. */
export function failureOf(err: unknown): Failure | null {
  return err instanceof ApiError ? details.get(err) ?? null : null;
}

export function healthText(cause: HealthCause): string {
  return HEALTH_TEXT[cause];
}

/** The full text of whatever was thrown, stack included, for a log line. */
export function errorDetail(e: unknown): string {
  return e instanceof Error ? e.stack ?? `${e.name}: ${e.message}` : String(e);
}

/** One log line for a request that failed for a backend reason: the detail the client was not shown. */
export function logRequestFailure(logger: Logger, err: unknown, requestId: string, model: string): void {
  const f = failureOf(err);
  if (f) logger.error("request failed", { request_id: requestId, model, cause: f.cause, detail: f.detail });
}
