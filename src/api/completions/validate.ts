// Checks a legacy completions request beyond its schema (suffix, best_of, max_tokens 0) and maps it onto the core: one
// raw-prompt request per prompt, sharing the samplers chat maps its fields onto; echo with logprobs scores the prompt.
import { ApiError } from "../../errors/api-error.ts";
import type { CoreRequest } from "../../inference/request.ts";
import { samplerFields } from "../sampler-fields.ts";
import type { CompletionRequestBody } from "./schema.ts";

const bad = (message: string, param: string) => ApiError.badRequest(message, param);

/** The format's default output length. */
export const DEFAULT_MAX_TOKENS = 16;

/** The prompt field as a list of prompts, each text or token ids. */
export function promptList(prompt: CompletionRequestBody["prompt"]): (string | number[])[] {
  if (typeof prompt === "string") return [prompt];
  if (prompt.every((p) => typeof p === "number")) return [prompt as number[]];
  return prompt as (string | number[])[];
}

/** The core requests of a validated body, one per prompt, in the prompts' order. */
export function completionRequests(body: CompletionRequestBody): CoreRequest[] {
  if (body.suffix != null && body.suffix !== "") {
    throw bad("suffix is not supported: no model on this server has a fill-in-the-middle template.", "suffix");
  }
  const n = body.n ?? 1;
  if (body.best_of != null && body.best_of !== n) {
    throw bad(`best_of (${body.best_of}) must equal n (${n}): kiln returns every candidate it generates rather than choosing among them.`, "best_of");
  }
  if (body.max_tokens === 0 && !body.echo) {
    throw bad("max_tokens must be at least 1; 0 is only for echo, which returns the prompt (with its logprobs) and generates nothing.", "max_tokens");
  }
  const base: Omit<CoreRequest, "rawPrompt"> = {
    conversation: [],
    tools: null,
    toolChoice: "none",
    answerFormat: { kind: "text" },
    n,
    maxTokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: body.seed ?? null,
    ...samplerFields(body),
    stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
    ignoreEos: false,
    ...(body.logprobs != null ? { logprobs: body.logprobs } : {}),
    ...promptScoring(body),
  };
  return promptList(body.prompt).map((rawPrompt) => ({ ...base, rawPrompt }));
}

/**
 * Echo with logprobs scores the prompt (each token's log probability after the first, with the same number of
 * alternatives); so does echo with max_tokens 0, whose whole answer is the prompt (its entries shown only if asked).
 */
function promptScoring(body: CompletionRequestBody): Pick<CoreRequest, "promptLogprobs"> {
  if (!body.echo || (body.logprobs == null && body.max_tokens !== 0)) return {};
  return { promptLogprobs: body.logprobs ?? 0 };
}

/** Whether the body's requests score their prompts (the engine then keeps every prompt position's logits). */
export const scoresPrompt = (body: CompletionRequestBody): boolean => promptScoring(body).promptLogprobs !== undefined;
