// How chat names the core's finish reasons, and the fingerprint its objects carry: one place for both shapes.
import type { FinishReason } from "../../inference/blocks.ts";

export const SYSTEM_FINGERPRINT = "kiln";

/** Chat has no "cancelled": a choice stopped early (its client left, or the time limit) reads as "stop". */
export function chatFinishReason(reason: FinishReason): "stop" | "length" | "tool_calls" {
  return reason === "cancelled" ? "stop" : reason;
}
