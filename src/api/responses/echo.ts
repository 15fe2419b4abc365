// The request fields a response object echoes, with the format's defaults, and the lane it runs in.
import type { ServiceTier } from "../../inference/service-tier.ts";
import { echoedTier } from "../service-tier-field.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import type { ResponsesPlan } from "./validate.ts";

export function echo(body: ResponsesRequestBody, plan: ResponsesPlan, lane: ServiceTier | undefined): Record<string, unknown> {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: plan.effort, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    background: body.background ?? false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? (body.tools?.length ? "auto" : "none"),
    tools: body.tools ?? [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    service_tier: echoedTier(lane),
    user: body.user ?? null,
  };
}
