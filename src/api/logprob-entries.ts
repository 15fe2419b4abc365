// The OpenAI formats' log-probability entry ({token, logprob, bytes, top_logprobs}), which Chat Completions' choice
// logprobs and Responses' output_text logprobs share.
import type { Logprob } from "../inference/logprobs.ts";

export function logprobEntries(entries: readonly Logprob[]) {
  return entries.map((e) => ({
    token: e.token,
    logprob: e.logprob,
    bytes: e.bytes,
    top_logprobs: e.top.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes })),
  }));
}
