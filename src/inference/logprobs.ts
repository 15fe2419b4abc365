// Token log probabilities as every family encodes them: the token's text (its UTF-8 bytes decoded, a partial
// character shown as U+FFFD), the bytes themselves, the log probability, and the most likely alternatives.
import type { PromptLogprob as WorkerPromptLogprob, TokenLogprob } from "../protocol/text.ts";

export interface Logprob {
  token: string;
  bytes: number[];
  logprob: number;
  top: { token: string; bytes: number[]; logprob: number }[];
}

/** A prompt token's entry: the first token's has no log probability and no alternatives (nothing precedes it). */
export type PromptLogprob = Logprob | { token: string; bytes: number[]; logprob: null; top: null };

const decoder = new TextDecoder();
const text = (bytes: number[]) => decoder.decode(Uint8Array.from(bytes));

/** The worker's entries in the families' shape. */
export function toLogprobs(entries: readonly TokenLogprob[]): Logprob[] {
  return entries.map((e) => ({
    token: text(e.bytes),
    bytes: e.bytes,
    logprob: e.logprob,
    top: e.top.map((t) => ({ token: text(t.bytes), bytes: t.bytes, logprob: t.logprob })),
  }));
}

/** The worker's prompt entries in the families' shape. */
export function toPromptLogprobs(entries: readonly WorkerPromptLogprob[]): PromptLogprob[] {
  return entries.map((e) => (e.logprob === null ? { token: text(e.bytes), bytes: e.bytes, logprob: null, top: null } : toLogprobs([e])[0]!));
}
