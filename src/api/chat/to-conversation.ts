// Chat Completions messages → the neutral conversation (roles, content parts, tool calls and results). An assistant
// message's reasoning_content is left out: chat has no seal, so kiln cannot tell the model's thinking from the client's.
import { ApiError, clip } from "../../errors/api-error.ts";
import { type Conversation, type ImagePart, type Part, parseArguments, pushTurn, type TextPart } from "../../inference/conversation.ts";
import type { ChatRequestBody } from "./schema.ts";

type ChatMessageIn = ChatRequestBody["messages"][number];
const bad = (message: string, param: string) => ApiError.badRequest(message, param);

/** `data:<type>;base64,<data>` becomes inline bytes; any other URL stays a reference. */
export function imageFromUrl(url: string): ImagePart["source"] {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { kind: "base64", mediaType: m[1]!, data: m[2]! } : { kind: "url", url };
}

function contentParts(content: ChatMessageIn["content"], path: string, allowImages: boolean): (TextPart | ImagePart)[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.flatMap((part, j): (TextPart | ImagePart)[] => {
    const p = part as { type: string; text?: string; image_url?: { url?: string; detail?: ImagePart["detail"] } };
    if (p.type === "text" && typeof p.text === "string") return p.text ? [{ type: "text", text: p.text }] : [];
    if (p.type === "image_url" && allowImages && typeof p.image_url?.url === "string") {
      return [{ type: "image", source: imageFromUrl(p.image_url.url), ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) }];
    }
    if (p.type === "image_url") throw bad(`This model does not accept image input (${path}.${j}).`, `${path}.${j}`);
    throw bad(`Unsupported content part type '${clip(String(p.type))}' at ${path}.${j}; use {"type":"text","text":…}.`, `${path}.${j}.type`);
  });
}

/** Maps validated chat messages; throws 400 naming the param for content the conversation cannot hold. */
export function chatToConversation(messages: ChatMessageIn[], opts: { vision: boolean }): Conversation {
  const conv: Conversation = [];
  messages.forEach((m, i) => {
    const path = `messages.${i}.content`;
    switch (m.role) {
      case "system":
      case "developer":
        return pushTurn(conv, { role: "system", parts: contentParts(m.content, path, false) });
      case "user": {
        if (m.content === null || m.content === undefined) throw bad(`messages.${i} (role 'user') needs content.`, path);
        return pushTurn(conv, { role: "user", parts: contentParts(m.content, path, opts.vision) });
      }
      case "assistant": {
        const parts: Part[] = contentParts(m.content, path, false);
        (m.tool_calls ?? []).forEach((c, j) => {
          const args = parseArguments(c.function.arguments);
          if (!args) throw bad(`messages.${i}.tool_calls.${j}.function.arguments must be a JSON object.`, `messages.${i}.tool_calls.${j}.function.arguments`);
          parts.push({ type: "tool_call", id: c.id, name: c.function.name, arguments: args });
        });
        if (!parts.length) throw bad(`messages.${i} (role 'assistant') needs content or tool_calls.`, path);
        return pushTurn(conv, { role: "assistant", parts });
      }
      case "tool":
        return pushTurn(conv, {
          role: "tool",
          parts: [{ type: "tool_result", callId: m.tool_call_id ?? "", parts: contentParts(m.content, path, false), isError: false }],
        }, true);
      default:
        throw bad(`messages.${i}.role '${clip(String(m.role))}' is not supported; use system, developer, user, assistant or tool.`, `messages.${i}.role`);
    }
  });
  return conv;
}
