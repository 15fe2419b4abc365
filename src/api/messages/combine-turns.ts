// Consecutive messages of one role become one turn, their content blocks concatenated in order, as Anthropic's API
// combines them (Claude Code's --continue replays several assistant messages in a row after its max-token retries).
import type { MessagesBlock, MessagesMessage } from "./to-conversation.ts";

const blocksOf = (m: MessagesMessage): MessagesBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

/** One turn per run of same-role messages; a message alone in its run is kept as it came (a string stays a string). */
export function combineTurns(messages: readonly MessagesMessage[]): MessagesMessage[] {
  const out: MessagesMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content = [...blocksOf(last), ...blocksOf(m)];
    else out.push({ role: m.role, content: m.content });
  }
  return out;
}
