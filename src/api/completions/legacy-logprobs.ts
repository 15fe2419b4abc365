// The legacy format's logprobs object ({tokens, token_logprobs, top_logprobs, text_offset}) from the core's entries.
import type { Logprob } from "../../inference/logprobs.ts";
import type { CompletionLogprobs } from "./schema.ts";

/**
 * `entries` as the format writes them, their text starting at `offset` in the choice's text (after an echoed prompt,
 * or the chunks already streamed). Each top list also holds the token itself, as the format promises (up to
 * logprobs + 1 alternatives); two tokens of the same text keep the likelier's.
 */
export function legacyLogprobs(entries: readonly Logprob[], offset: number): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let at = offset;
  for (const e of entries) {
    out.tokens.push(e.token);
    out.token_logprobs.push(e.logprob);
    const top: Record<string, number> = {};
    for (const t of [...e.top, e]) if (!(t.token in top)) top[t.token] = t.logprob;
    out.top_logprobs.push(top);
    out.text_offset.push(at);
    at += e.token.length;
  }
  return out;
}
