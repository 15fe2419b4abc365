// The prompt's own log probabilities (legacy completions' echo with logprobs): the logits at each prompt position score
// the prompt token after it, read from a prefill pass that kept every position (StepInputs.allLogits).
import type { PromptLogprob } from "../../src/protocol/text.ts";
import { rawDistribution, tokenLogprob } from "./token-logprobs.ts";

/** Logit cells (positions × vocabulary) one scoring pass may hold: 32 MiB of float32, whatever the vocabulary. */
export const PROMPT_LOGIT_CELLS = 8 * 1024 * 1024;

/** The width of a scoring chunk: at most `width`, and few enough positions that their logits stay within the cells. */
export function scoringWidth(width: number, vocab: number): number {
  return Math.max(1, Math.min(width, Math.floor(PROMPT_LOGIT_CELLS / vocab)));
}

/**
 * The entries a chunk of prompt positions [from, from + n) yields, in prompt order: position p's logits (row p − from of
 * `positions`, [n, vocab]) score prompt token p + 1; the first chunk also yields the first token's, which has none.
 */
export function promptEntries(
  positions: Float32Array,
  vocab: number,
  promptIds: readonly number[],
  from: number,
  n: number,
  top: number,
  bytes: (id: number) => Uint8Array,
): PromptLogprob[] {
  const out: PromptLogprob[] = [];
  if (from === 0) out.push({ token: promptIds[0]!, bytes: Array.from(bytes(promptIds[0]!)), logprob: null, top: null });
  for (let j = 0; j < n && from + j + 1 < promptIds.length; j++) {
    const dist = rawDistribution(positions.subarray(j * vocab, (j + 1) * vocab), top);
    out.push(tokenLogprob(dist, promptIds[from + j + 1]!, bytes));
  }
  return out;
}
