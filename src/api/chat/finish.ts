// How chat names the core's finish reasons and log probabilities, and the fingerprint its objects carry: one place
// for the shapes the whole answer and its stream chunks share.
import type { FinishReason } from "../../inference/blocks.ts";
import type { Logprob } from "../../inference/logprobs.ts";
import { logprobEntries } from "../logprob-entries.ts";

export const SYSTEM_FINGERPRINT = "kiln";

/** Chat has no "cancelled": a choice stopped early (its client left, or the time limit) reads as "stop". */
export function chatFinishReason(reason: FinishReason): "stop" | "length" | "tool_calls" {
  return reason === "cancelled" ? "stop" : reason;
}

/** The format's logprobs object for a choice's answer tokens (null when the request did not ask). */
export function chatLogprobs(entries: readonly Logprob[] | undefined) {
  if (!entries) return null;
  return { content: logprobEntries(entries), refusal: null };
}
