// Messages errors use Anthropic's envelope and error types, keeping the spec's code and param inside `error`.
import { expect, test } from "bun:test";
import { anthropicErrorType, messagesErrorBody } from "../../../src/api/messages/assembler.ts";
import { ApiError } from "../../../src/errors/api-error.ts";
import { ContextLengthError } from "../../../src/inference/context.ts";

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

test("the context 400 reads as Anthropic's (input + max_tokens > context), with the spec's three figures; chat and Responses keep OpenAI's", () => {
  const err = new ContextLengthError({ inputTokens: 31922, requestedOutput: 32000, contextLength: 40960, atLeast: false });
  expect(messagesErrorBody(err)).toEqual({
    type: "error",
    error: {
      type: "invalid_request_error",
      message: "input length and `max_tokens` exceed context limit: 31922 + 32000 > 40960, decrease input length or `max_tokens` and try again",
      param: null,
      code: null,
    },
  });
  expect(err.toBody().error.message).toBe(
    "This model's maximum context length is 40960 tokens. However, you requested 63922 tokens (31922 in the input, 32000 in the output). Please reduce the length of the input or of the requested output.",
  );
  // A prompt refused from its size before tokenizing states its lower bound, in the same words.
  expect(messagesErrorBody(new ContextLengthError({ inputTokens: 9000, requestedOutput: 1, contextLength: 4096, atLeast: true })).error).toMatchObject({
    message: "input length and `max_tokens` exceed context limit: 9000 + 1 > 4096, decrease input length or `max_tokens` and try again",
  });
});
