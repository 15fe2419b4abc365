// Reasoning effort, the one knob several formats give for thinking: whether the template opens a thinking block
// and how many tokens it may use before kiln closes it. Lower effort, fewer thinking tokens.
import type { CoreRequest } from "./request.ts";

export const EFFORTS = ["none", "minimal", "low", "medium", "high"] as const;
export type Effort = (typeof EFFORTS)[number];

/** Thinking tokens each effort may spend before kiln closes the thinking block. */
export const EFFORT_BUDGET: Record<Effort, number> = { none: 0, minimal: 0, low: 256, medium: 1024, high: 4096 };

/**
 * The template switch and budget an effort gives a model that reasons: none and minimal skip the block, the others
 * open it with their budget; no effort leaves it to the model's own template.
 */
export function thinkingFor(reasons: boolean, effort: Effort | null): Pick<CoreRequest, "templateOptions" | "thinkingBudget"> {
  if (!reasons || effort === null) return {};
  const thinks = effort !== "none" && effort !== "minimal";
  return { templateOptions: { enable_thinking: thinks }, ...(thinks ? { thinkingBudget: EFFORT_BUDGET[effort] } : {}) };
}
