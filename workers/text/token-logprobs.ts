// The model's own log probabilities for a sampled token and its most likely alternatives: log-softmax of the raw
// logits (before penalties, bias, the grammar and temperature), as the compatible format and vLLM report them.
import type { TokenLogprob } from "../../src/protocol/text.ts";

/** Most alternatives a request may ask for (the format's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** What is kept of a row's raw logits until its token is known: the normalizer and the top `n` ids. */
export interface RawDistribution {
  logZ: number;
  raw: Float32Array;
  top: number[];
}

/** Reads `logits` (not modified) before anything else changes them; `n` alternatives, the highest first, lowest ids on ties. */
export function rawDistribution(logits: Float32Array, n: number): RawDistribution {
  // One pass finds the maximum and the top n (n ≤ 20: a small sorted list beats a selection over the vocabulary);
  // `floor` caches the n-th value (above every logit when n is 0), so most ids cost two comparisons.
  let max = -Infinity;
  const top: number[] = [];
  let floor = n > 0 ? -Infinity : Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > max) max = v;
    if (!(v > floor)) continue;
    let at = top.length;
    while (at > 0 && logits[top[at - 1]!]! < v) at--;
    top.splice(at, 0, i);
    if (top.length > n) top.pop();
    if (top.length === n) floor = logits[top[n - 1]!]!;
  }
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > -Infinity) sum += Math.exp(v - max);
  }
  return { logZ: max + Math.log(sum), raw: Float32Array.from(logits), top };
}

/** The entry for the token chosen from `d`. */
export function tokenLogprob(d: RawDistribution, token: number, bytes: (id: number) => Uint8Array): TokenLogprob {
  const lp = (id: number) => Math.max(-9999, d.raw[id]! - d.logZ);
  return {
    token,
    bytes: Array.from(bytes(token)),
    logprob: lp(token),
    top: d.top.map((id) => ({ token: id, bytes: Array.from(bytes(id)), logprob: lp(id) })),
  };
}
