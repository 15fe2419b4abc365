// The OpenAI formats' sampler fields (penalties, logit_bias, and the top_k / min_p / repetition_penalty extensions
// vLLM and llama.cpp accept) as the core's samplers: chat and legacy completions map them the same way.
import { t } from "elysia";
import { ApiError, clip } from "../errors/api-error.ts";
import type { CoreRequest } from "../inference/request.ts";
import { Int, nullable } from "./schema-helpers.ts";

/** The request schema's sampler properties, spread into each format's body schema. */
export const SAMPLER_PROPERTIES = {
  presence_penalty: nullable(t.Number({ minimum: -2, maximum: 2 }), "presence_penalty must be between -2 and 2"),
  frequency_penalty: nullable(t.Number({ minimum: -2, maximum: 2 }), "frequency_penalty must be between -2 and 2"),
  logit_bias: nullable(
    t.Record(t.String({ pattern: "^[0-9]+$" }), t.Number({ minimum: -100, maximum: 100 })),
    "logit_bias must map token ids (as strings) to biases from -100 to 100",
  ),
  top_k: nullable(Int({ minimum: -1, description: "Extension (as in vLLM and llama.cpp): sample only among the k most likely tokens; 0 or -1: no limit." }), "top_k must be a whole number; 0 or -1 means no limit"),
  min_p: nullable(t.Number({ minimum: 0, maximum: 1, description: "Extension (as in vLLM and llama.cpp): sample only tokens at least min_p times as likely as the most likely one." }), "min_p must be between 0 and 1"),
  repetition_penalty: nullable(
    t.Number({ exclusiveMinimum: 0, maximum: 10, description: "Extension (as in vLLM and llama.cpp): > 1 makes the prompt's and the output's tokens less likely; 1 changes nothing." }),
    "repetition_penalty must be greater than 0 and at most 10",
  ),
};

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
