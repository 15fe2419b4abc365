// The context-window rule: input tokens plus requested output tokens must fit the model's context length. The 400
// carries its figures, so a family whose clients parse another wording words it its own way.
import { ApiError } from "../errors/api-error.ts";

/** The figures of a request that does not fit; `atLeast`: the input is a lower bound, counted without tokenizing. */
export interface ContextOverflow {
  inputTokens: number;
  requestedOutput: number;
  contextLength: number;
  atLeast: boolean;
}

function defaultWording(o: ContextOverflow): string {
  const least = o.atLeast ? "at least " : "";
  return (
    `This model's maximum context length is ${o.contextLength} tokens. However, you requested ${least}` +
    `${o.inputTokens + o.requestedOutput} tokens (${least}${o.inputTokens} in the input, ${o.requestedOutput} in the output). ` +
    `Please reduce the length of the input or of the requested output.`
  );
}

/** The spec's context 400 (param null, code null) in the default wording, with its figures for other wordings. */
export class ContextLengthError extends ApiError {
  constructor(readonly overflow: ContextOverflow) {
    super(400, "invalid_request_error", defaultWording(overflow));
  }
}

/** Returns the output budget to use, or throws the spec's 400 (param null, code null) when it does not fit. */
export function fitContext(inputTokens: number, requestedOutput: number | null, contextLength: number): number {
  if (requestedOutput === null) {
    const room = contextLength - inputTokens;
    if (room >= 1) return room;
    requestedOutput = 1;
  }
  if (inputTokens + requestedOutput > contextLength) throw new ContextLengthError({ inputTokens, requestedOutput, contextLength, atLeast: false });
  return requestedOutput;
}

/**
 * The cheap check before tokenizing: a prompt of at least `minInputTokens` (a lower bound, not a count) that
 * cannot fit with the requested output gets the context 400 without being tokenized.
 */
export function checkPromptBound(minInputTokens: number, requestedOutput: number | null, contextLength: number): void {
  const output = requestedOutput ?? 1;
  if (minInputTokens + output <= contextLength) return;
  throw new ContextLengthError({ inputTokens: minInputTokens, requestedOutput: output, contextLength, atLeast: true });
}
