// Messages (Anthropic format) system + messages → the neutral conversation: text, image, thinking, tool_use and tool_result blocks.
import { type Conversation, type MediaPart, type Part, pushTurn, type TextPart } from "../../inference/conversation.ts";

export type MessagesImageSource = { type: "base64"; media_type: string; data: string } | { type: "url"; url: string } | { type: "file"; file_id: string };

/** The block shapes this mapping reads (the route's schema validates them first). */
export type MessagesBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: MessagesImageSource }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content?: string | ({ type: "text"; text: string } | { type: "image"; source: MessagesImageSource })[]; is_error?: boolean };

export interface MessagesMessage {
  role: "user" | "assistant";
  content: string | MessagesBlock[];
}

function image(source: MessagesImageSource, at: string): MediaPart {
  const s: MediaPart["source"] =
    source.type === "base64" ? { kind: "base64", mediaType: source.media_type ?? null, data: source.data }
    : source.type === "url" ? { kind: "url", url: source.url }
    : { kind: "file", fileId: source.file_id };
  return { type: "media", declared: "image", source: s, at };
}

function resultParts(content: Extract<MessagesBlock, { type: "tool_result" }>["content"], at: string): (TextPart | MediaPart)[] {
  if (content === undefined) return [];
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.map((b, k) => (b.type === "text" ? { type: "text", text: b.text } : image(b.source, `${at}.content.${k}`)));
}

/** The system prompt first; a user turn's tool_result blocks become a tool turn, its other blocks a user turn. */
export function messagesToConversation(system: string | { type: "text"; text: string }[] | undefined, messages: MessagesMessage[]): Conversation {
  const conv: Conversation = [];
  const sys = typeof system === "string" ? system : (system ?? []).map((b) => b.text).join("\n");
  if (sys) pushTurn(conv, { role: "system", parts: [{ type: "text", text: sys }] });
  messages.forEach((m, i) => {
    const blocks: MessagesBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "user") {
      const results: Part[] = [], rest: Part[] = [];
      blocks.forEach((b, j) => {
        const at = `messages.${i}.content.${j}`;
        if (b.type === "tool_result") results.push({ type: "tool_result", callId: b.tool_use_id, parts: resultParts(b.content, at), isError: b.is_error ?? false });
        else if (b.type === "text") rest.push({ type: "text", text: b.text });
        else if (b.type === "image") rest.push(image(b.source, at));
      });
      if (results.length) pushTurn(conv, { role: "tool", parts: results });
      if (rest.length || !results.length) pushTurn(conv, { role: "user", parts: rest });
      return;
    }
    const parts: Part[] = [];
    for (const b of blocks) {
      if (b.type === "thinking") parts.push({ type: "reasoning", text: b.thinking, signature: b.signature });
      else if (b.type === "redacted_thinking") parts.push({ type: "reasoning", text: "", sealed: b.data });
      else if (b.type === "text") parts.push({ type: "text", text: b.text });
      else if (b.type === "tool_use") parts.push({ type: "tool_call", id: b.id, name: b.name, arguments: b.input });
    }
    pushTurn(conv, { role: "assistant", parts });
  });
  return conv;
}
