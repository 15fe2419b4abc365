// The one error type every route throws: it carries the HTTP status and the spec's error fields.

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "rate_limit_error"
  | "server_error";

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  static badRequest(message: string, param: string | null = null, code: string | null = null) {
    return new ApiError(400, "invalid_request_error", message, code, param);
  }
  static unauthorized() {
    return new ApiError(401, "authentication_error", "Unauthorized", "invalid_api_key");
  }
  static modelNotFound(model: string) {
    return new ApiError(404, "invalid_request_error", `The model '${clip(model)}' does not exist`, "model_not_found", "model");
  }
  /** Another resource the request names (a stored response, …) that does not exist or is not the caller's. */
  static notFound(message: string, param: string | null = null) {
    return new ApiError(404, "invalid_request_error", message, null, param);
  }
  /**
   * The body passed its route's limit. The connection is not closed at once: a client still sending would get a reset
   * instead of this answer (and retry); the server discards the rest as it arrives, without buffering it.
   */
  static payloadTooLarge(maxBytes: number) {
    return new ApiError(
      413, "invalid_request_error", `The request body is larger than this endpoint's limit of ${formatBytes(maxBytes)}.`,
      "payload_too_large",
    );
  }
  static bodyTimeout(timeoutMs: number) {
    return new ApiError(
      408, "invalid_request_error", `The request body was not received within ${Math.round(timeoutMs / 100) / 10} s.`,
      null, null, { connection: "close" },
    );
  }
  static overloaded(message = "The server is at its active request limit; retry shortly") {
    return new ApiError(503, "server_error", message, "service_overloaded", null, retryAfter(60));
  }
  static backendUnavailable(message = "The model backend is unavailable; retry shortly", retryAfterS = 60) {
    return new ApiError(503, "server_error", message, "backend_unavailable", null, retryAfter(retryAfterS));
  }
  static shuttingDown() {
    return new ApiError(503, "server_error", "The server is shutting down; retry the request", "server_shutting_down", null, retryAfter(5));
  }
  static timeout(limitMs: number) {
    return new ApiError(
      504, "server_error",
      `The request ran past the ${Math.round(limitMs / 1000)} s non-streaming time limit; set stream to true or reduce the work`,
      "gateway_timeout",
    );
  }
  /**
   * kiln's own storage failed a write (src/fs/storage-fault.ts): the spec has no code of its own for it, so it is the
   * retryable 503 for a backend dependency, saying which way it failed; nothing of the request was kept or charged.
   */
  static storageFault(kind: "full" | "unwritable") {
    const what = kind === "full" ? "The server's storage is full" : "The server cannot write to its storage";
    return ApiError.backendUnavailable(`${what}, so the request was not carried out; retry later`);
  }
  static internal() {
    return new ApiError(500, "server_error", "The server had an internal error while processing the request", null);
  }
}

/** A client-supplied value quoted in a message: at most 64 characters, so a huge value is not echoed back. */
export function clip(value: string, max = 64): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}

/** 4194304 → "4 MiB", 1048576 → "1 MiB", 1500 → "1500 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** Retry-After in seconds plus the millisecond header the official clients read first. */
export function retryAfter(seconds: number): Record<string, string> {
  return { "retry-after": String(seconds), "retry-after-ms": String(seconds * 1000) };
}
