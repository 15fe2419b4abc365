// The OpenAI formats' JSON answer (Chat Completions and legacy completions): the run's choices collected within the
// time limit, each encoded by the format, under the completion head, with the format's usage object.
import type { ChoiceResult, Usage } from "../inference/blocks.ts";
import { collectRun } from "../inference/collect-run.ts";
import type { Run } from "../inference/text-run.ts";
import { SYSTEM_FINGERPRINT } from "./chat/finish.ts";

/** What a completion object says about itself besides its choices: which one, when, from which model, its type. */
export interface CompletionHead<O extends string> {
  id: string;
  created: number;
  model: string;
  object: O;
}

export async function openaiBody<O extends string, C, U>(
  run: Run,
  timeoutMs: number,
  head: CompletionHead<O>,
  encode: { choice: (r: ChoiceResult, index: number) => C; usage: (u: Usage) => U },
) {
  const { results, usage } = await collectRun(run, timeoutMs);
  return { ...head, system_fingerprint: SYSTEM_FINGERPRINT, choices: results.map(encode.choice), usage: encode.usage(usage) };
}
