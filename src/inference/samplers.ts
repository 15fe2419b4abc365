// A request's optional samplers as the worker takes them, checked against the model's vocabulary first.
import { ApiError } from "../errors/api-error.ts";
import type { SamplingParams } from "../protocol/text.ts";
import type { Samplers } from "./request.ts";

type SamplerParams = Pick<SamplingParams, "minP" | "presencePenalty" | "frequencyPenalty" | "repetitionPenalty" | "logitBias">;

/** The worker's fields for `s`, leaving out those that change nothing; a bias id outside `vocabSize` is a 400. */
export function samplerParams(s: Samplers | undefined, vocabSize: number): SamplerParams {
  if (!s) return {};
  const unknown = (s.logitBias ?? []).filter(([id]) => id >= vocabSize).map(([id]) => id);
  if (unknown.length) {
    const shown = unknown.slice(0, 5).join(", ") + (unknown.length > 5 ? `, … (${unknown.length} in all)` : "");
    throw ApiError.badRequest(`${s.biasParam ?? "the logit bias"} names token ids the model's tokenizer does not have (its ids are 0 to ${vocabSize - 1}): ${shown}.`, s.biasParam ?? null);
  }
  return {
    ...(s.minP ? { minP: s.minP } : {}),
    ...(s.presencePenalty ? { presencePenalty: s.presencePenalty } : {}),
    ...(s.frequencyPenalty ? { frequencyPenalty: s.frequencyPenalty } : {}),
    ...(s.repetitionPenalty !== undefined && s.repetitionPenalty !== 1 ? { repetitionPenalty: s.repetitionPenalty } : {}),
    ...(s.logitBias?.length ? { logitBias: s.logitBias } : {}),
  };
}
