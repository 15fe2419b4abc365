// How many opening prompt tokens equal an operator-declared public prefix (a system prompt in kiln.json's
// `public_prefixes`): the prefix cache shares those across teams, and nothing after them.
import type { PrefixScope } from "../protocol/text.ts";
import type { ModelTokenizer } from "./tokenizer.ts";

/** Each tokenizer's declared prefixes as token ids: a system-only conversation through its template, tokenized once. */
const rendered = new WeakMap<ModelTokenizer, Map<string, Promise<number[]>>>();

function idsOf(tokenizer: ModelTokenizer, text: string): Promise<number[]> {
  let byText = rendered.get(tokenizer);
  if (!byText) rendered.set(tokenizer, (byText = new Map()));
  let ids = byText.get(text);
  if (!ids) {
    ids = tokenizer.encodePrompt(tokenizer.renderChat([{ role: "system", parts: [{ type: "text", text }] }], null));
    byText.set(text, ids);
  }
  return ids;
}

/** Leading elements two lists share. */
export function sharedLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * The prompt's opening tokens that equal some declared public prefix's tokens (the longest run): every token in it is
 * the operator's public text or its template markup, so sharing its KV across teams tells nobody what a team sent.
 */
export async function publicTokens(tokenizer: ModelTokenizer, prefixes: readonly string[], promptIds: readonly number[]): Promise<number> {
  let best = 0;
  for (const text of prefixes) best = Math.max(best, sharedLength(await idsOf(tokenizer, text), promptIds));
  return best;
}

/** A request's cache scope: its team's own namespace, or one for every team when the operator shares all prefixes. */
export function prefixScope(teamId: number, sharing: "team" | "all", publicCount: number): PrefixScope {
  return { scope: sharing === "all" ? "all" : `team:${teamId}`, publicTokens: publicCount };
}
