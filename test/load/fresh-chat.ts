// Fresh chat prompts for the throughput rows: each request a different prompt of PROMPT's token count
// (test/load/token-text.ts), as text for kiln and as templated token ids for the yardsticks that take ids (llama.cpp).
import type { ModelTokenizer } from "../../src/inference/tokenizer.ts";
import { PROMPT } from "./bench-model.ts";
import { FreshPrompts, oneTokenWords } from "./token-text.ts";

export interface FreshChat {
  /** The next user message: PROMPT with its opening words replaced by ones no other request had (same token count). */
  next(): string;
  /** One prompt's templated ids (every prompt has this length, PROMPT's own). */
  promptIds: number[];
  /** `batch` more prompts, as templated ids. */
  idsFor(batch: number): Promise<number[][]>;
}

/**
 * Why fresh: kiln keeps prompt prefixes' KV (KILN_PREFIX_CACHE) and llama-server keeps its slots' prompts
 * (cache_prompt), so one PROMPT sent by every client would let both skip most of each prefill after the first and
 * flatter the rates. A different opening per request leaves only the template's first few tokens in common (less than
 * one 16-token cache block), so every request pays its whole prefill on every side; the length stays PROMPT's.
 */
export async function freshChat(tokenizer: ModelTokenizer, base = PROMPT): Promise<FreshChat> {
  const count = (text: string) => tokenizer.encodeText(text).length;
  const fresh = new FreshPrompts(base, oneTokenWords(count), count);
  const ids = (text: string) => tokenizer.encodePrompt(tokenizer.renderChat([{ role: "user", parts: [{ type: "text", text }] }], null));
  const promptIds = await ids(fresh.next());
  return {
    next: () => fresh.next(),
    promptIds,
    idsFor: (batch) => Promise.all(Array.from({ length: batch }, () => ids(fresh.next()))),
  };
}
