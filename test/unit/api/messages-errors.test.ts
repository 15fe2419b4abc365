// Messages errors use Anthropic's envelope and error types, keeping the spec's code and param inside `error`.
import { expect, test } from "bun:test";
import { anthropicErrorType, messagesErrorBody } from "../../../src/api/messages/assembler.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

test("each status maps to Anthropic's error type", () => {
  const cases: [number, string][] = [
    [400, "invalid_request_error"], [401, "authentication_error"], [402, "billing_error"], [403, "permission_error"], [404, "not_found_error"],
    [408, "invalid_request_error"], [413, "request_too_large"], [429, "rate_limit_error"], [500, "api_error"], [503, "overloaded_error"], [504, "api_error"],
  ];
  for (const [status, type] of cases) expect([status, anthropicErrorType(status)]).toEqual([status, type]);
});

test("the body: type error on top; Anthropic's type, the message, and the spec's code and param inside", () => {
  expect(messagesErrorBody(ApiError.shuttingDown())).toEqual({
    type: "error",
    error: { type: "overloaded_error", message: "The server is shutting down; retry the request", code: "server_shutting_down", param: null },
  });
  expect(messagesErrorBody(ApiError.modelNotFound("nope-1"))).toEqual({
    type: "error",
    error: { type: "not_found_error", message: "The model 'nope-1' does not exist", code: "model_not_found", param: "model" },
  });
  expect(messagesErrorBody(ApiError.badRequest("bad", "max_tokens")).error).toMatchObject({ type: "invalid_request_error", param: "max_tokens" });
});
