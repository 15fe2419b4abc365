// Messages' `thinking` → the core's template switch and thinking budget: `enabled` with its budget_tokens, `adaptive`
// with output_config.effort mapped onto kiln's effort, `disabled` (and no `thinking`, Anthropic's default) off.
import { ApiError } from "../../errors/api-error.ts";
import { type Effort, thinkingFor } from "../../inference/effort.ts";
import type { CoreRequest } from "../../inference/request.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import type { ANTHROPIC_EFFORTS, MessagesRequestBody } from "./schema.ts";

/** kiln's effort for each of Anthropic's; kiln's highest (`high`) stands for the levels above it. */
const EFFORT: Record<(typeof ANTHROPIC_EFFORTS)[number], Effort> = { low: "low", medium: "medium", high: "high", xhigh: "high", max: "high" };

/** Anthropic's default effort when output_config.effort is left out. */
const DEFAULT_EFFORT = "high";

type ThinkingPlan = Pick<CoreRequest, "templateOptions" | "thinkingBudget">;

export function messagesThinking(body: Pick<MessagesRequestBody, "thinking" | "output_config" | "max_tokens">, model: ModelInfo): ThinkingPlan {
  const thinking = body.thinking;
  if (thinking?.type === "enabled") {
    if (!model.capabilities.reasoning) throw ApiError.badRequest(`The model '${model.id}' does not think; leave thinking out.`, "thinking");
    const budget = thinking.budget_tokens;
    if (budget === undefined) throw ApiError.badRequest("thinking.budget_tokens is required when thinking is enabled.", "thinking.budget_tokens");
    if (budget >= body.max_tokens) throw ApiError.badRequest(`thinking.budget_tokens (${budget}) must be less than max_tokens (${body.max_tokens}).`, "thinking.budget_tokens");
    return { templateOptions: { enable_thinking: true }, thinkingBudget: budget };
  }
  // A model that does not reason just answers: adaptive thinking leaves the choice to the model.
  if (!model.capabilities.reasoning) return {};
  if (thinking?.type === "adaptive") {
    const plan = thinkingFor(true, EFFORT[body.output_config?.effort ?? DEFAULT_EFFORT]);
    // Within max_tokens: the block may use at most half of it, so the answer always has room after it.
    return { ...plan, thinkingBudget: Math.min(plan.thinkingBudget!, Math.max(1, Math.floor(body.max_tokens / 2))) };
  }
  return { templateOptions: { enable_thinking: false } };
}
