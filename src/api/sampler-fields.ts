// The OpenAI formats' sampler fields (penalties, logit_bias, and the top_k / min_p / repetition_penalty extensions
// vLLM and llama.cpp accept) as the core's samplers: chat and legacy completions map them the same way.
import { ApiError, clip } from "../errors/api-error.ts";
import type { CoreRequest } from "../inference/request.ts";

export interface SamplerFields {
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
}

/** The core request's topK and samplers; a logit_bias key that is not a token id is a 400 naming logit_bias. */
export function samplerFields(body: SamplerFields): Pick<CoreRequest, "topK" | "samplers"> {
  const badId = Object.keys(body.logit_bias ?? {}).find((k) => !/^[0-9]{1,10}$/.test(k));
  if (badId !== undefined) throw ApiError.badRequest(`logit_bias keys are token ids (whole numbers, as strings), not '${clip(badId)}'.`, "logit_bias");
  return {
    ...(body.top_k && body.top_k > 0 ? { topK: body.top_k } : {}),
    samplers: {
      ...(body.min_p ? { minP: body.min_p } : {}),
      ...(body.presence_penalty ? { presencePenalty: body.presence_penalty } : {}),
      ...(body.frequency_penalty ? { frequencyPenalty: body.frequency_penalty } : {}),
      ...(body.repetition_penalty != null ? { repetitionPenalty: body.repetition_penalty } : {}),
      ...(body.logit_bias ? { logitBias: Object.entries(body.logit_bias).map(([id, b]) => [Number(id), b] as [number, number]), biasParam: "logit_bias" } : {}),
    },
  };
}
