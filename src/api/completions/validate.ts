// Checks a legacy completions request beyond its schema (suffix, best_of, echo with logprobs) and maps it onto the
// core: one raw-prompt request per prompt, sharing the samplers chat maps its fields onto.
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
  if (body.echo && body.logprobs != null) {
    throw bad("echo with logprobs is not supported: kiln computes no log probabilities for prompt tokens. Send one of them.", "echo");
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
  };
  return promptList(body.prompt).map((rawPrompt) => ({ ...base, rawPrompt }));
}
