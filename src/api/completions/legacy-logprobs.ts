// The legacy format's logprobs object ({tokens, token_logprobs, top_logprobs, text_offset}) from the core's entries.
import type { Logprob, PromptLogprob } from "../../inference/logprobs.ts";
import type { CompletionLogprobs } from "./schema.ts";

/**
 * The echoed prompt's `prompt` entries (its text starting at 0), then `entries` as the format writes them, their text
 * starting at `offset` in the choice's text (after an echoed prompt, or the chunks already streamed). Each top list
 * also holds the token itself, as the format promises (up to logprobs + 1 alternatives); two tokens of the same text
 * keep the likelier's. The first prompt token has no log probability: null, and its top list null.
 */
export function legacyLogprobs(entries: readonly Logprob[], offset: number, prompt: readonly PromptLogprob[] = []): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  const write = (list: readonly PromptLogprob[], from: number) => {
    let at = from;
    for (const e of list) {
      out.tokens.push(e.token);
      out.token_logprobs.push(e.logprob);
      out.top_logprobs.push(e.top === null ? null : topOf(e));
      out.text_offset.push(at);
      at += e.token.length;
    }
  };
  write(prompt, 0);
  write(entries, offset);
  return out;
}

function topOf(e: Logprob): Record<string, number> {
  const top: Record<string, number> = {};
  for (const t of [...e.top, e]) if (!(t.token in top)) top[t.token] = t.logprob;
  return top;
}
