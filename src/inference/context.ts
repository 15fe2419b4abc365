// The context-window rule: input tokens plus requested output tokens must fit the model's context length.
import { ApiError } from "../errors/api-error.ts";

/** Returns the output budget to use, or throws the spec's 400 (param null, code null) when it does not fit. */
export function fitContext(inputTokens: number, requestedOutput: number | null, contextLength: number): number {
  if (requestedOutput === null) {
    const room = contextLength - inputTokens;
    if (room >= 1) return room;
    requestedOutput = 1;
  }
  if (inputTokens + requestedOutput > contextLength) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${contextLength} tokens. However, you requested ` +
        `${inputTokens + requestedOutput} tokens (${inputTokens} in the input, ${requestedOutput} in the output). ` +
        `Please reduce the length of the input or of the requested output.`,
    );
  }
  return requestedOutput;
}

/**
 * The cheap check before tokenizing: a prompt of at least `minInputTokens` (a lower bound, not a count) that
 * cannot fit with the requested output gets the context 400 without being tokenized.
 */
export function checkPromptBound(minInputTokens: number, requestedOutput: number | null, contextLength: number): void {
  const output = requestedOutput ?? 1;
  if (minInputTokens + output <= contextLength) return;
  throw ApiError.badRequest(
    `This model's maximum context length is ${contextLength} tokens. However, you requested at least ` +
      `${minInputTokens + output} tokens (at least ${minInputTokens} in the input, ${output} in the output). ` +
      `Please reduce the length of the input or of the requested output.`,
  );
}
