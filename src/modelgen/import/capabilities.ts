// What an imported model can do, read from its chat template and vocabulary: tools when the template renders them,
// reasoning when it has a thinking block.
import type { GivenTokenizer } from "../build.ts";

/** Whether the vocabulary holds `token` as one added or regular token. */
function hasToken(t: GivenTokenizer, token: string): boolean {
  const added = (t.tokenizerJson.added_tokens as { content?: string }[] | undefined) ?? [];
  const vocab = (t.tokenizerJson.model as { vocab?: Record<string, number> | [string, number][] } | undefined)?.vocab;
  if (added.some((a) => a.content === token)) return true;
  if (Array.isArray(vocab)) return vocab.some(([v]) => v === token);
  return vocab !== undefined && token in vocab;
}

export function capabilitiesOf(t: GivenTokenizer): Record<string, boolean> {
  const template = typeof t.tokenizerConfig.chat_template === "string" ? t.tokenizerConfig.chat_template : "";
  return {
    chat: template.length > 0,
    tools: /\btools\b/.test(template) && (template.includes("<tool_call>") || hasToken(t, "<tool_call>")),
    reasoning: template.includes("<think>") || hasToken(t, "<think>"),
    vision: false,
    image_generation: false,
  };
}
