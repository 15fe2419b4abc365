// Chat Completions messages → the neutral conversation (roles, content parts, tool calls and results). An assistant
// message's reasoning_content is left out: chat has no seal, so kiln cannot tell the model's thinking from the client's.
import { ApiError, clip } from "../../errors/api-error.ts";
import { type Conversation, type MediaPart, type Part, parseArguments, pushTurn, type TextPart } from "../../inference/conversation.ts";
import { sourceFromFileData, sourceFromUrl } from "../../media/data-url.ts";
import type { ChatRequestBody } from "./schema.ts";

type ChatMessageIn = ChatRequestBody["messages"][number];
const bad = (message: string, param: string) => ApiError.badRequest(message, param);

type RawPart = {
  type: string;
  text?: string;
  image_url?: { url?: string; detail?: MediaPart["detail"] };
  input_audio?: { data?: string; format?: string };
  file?: { file_id?: string; file_data?: string; filename?: string };
  video_url?: { url?: string };
};

/** A media part of a user message (image_url, video_url, input_audio, file) as a core media part; 400 naming the field it lacks. */
function mediaPart(p: RawPart, at: string): MediaPart | null {
  switch (p.type) {
    case "image_url":
      if (typeof p.image_url?.url !== "string" || !p.image_url.url) throw bad(`${at}.image_url.url is required.`, `${at}.image_url.url`);
      return { type: "media", declared: "image", source: sourceFromUrl(p.image_url.url), at, ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) };
    // vLLM's and SGLang's part for a video: the same video a file part would carry, declared as one.
    case "video_url":
      if (typeof p.video_url?.url !== "string" || !p.video_url.url) throw bad(`${at}.video_url.url is required.`, `${at}.video_url.url`);
      return { type: "media", declared: "video", source: sourceFromUrl(p.video_url.url), at };
    case "input_audio":
      if (typeof p.input_audio?.data !== "string" || !p.input_audio.data) throw bad(`${at}.input_audio.data (base64 audio) is required.`, `${at}.input_audio.data`);
      return { type: "media", declared: "audio", source: { kind: "base64", mediaType: p.input_audio.format ?? null, data: p.input_audio.data }, at };
    case "file": {
      const f = p.file;
      const name = f?.filename ? { filename: f.filename } : {};
      if (f?.file_id) return { type: "media", declared: "file", source: { kind: "file", fileId: f.file_id }, at, ...name };
      if (f?.file_data) return { type: "media", declared: "file", source: sourceFromFileData(f.file_data), at, ...name };
      throw bad(`${at}.file needs file_id or file_data.`, `${at}.file`);
    }
    default:
      return null;
  }
}

function contentParts(content: ChatMessageIn["content"], path: string, role: string): (TextPart | MediaPart)[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.flatMap((part, j): (TextPart | MediaPart)[] => {
    const p = part as RawPart;
    const at = `${path}.${j}`;
    if (p.type === "text" && typeof p.text === "string") return p.text ? [{ type: "text", text: p.text }] : [];
    const media = mediaPart(p, at);
    if (media && role === "user") return [media];
    if (media) throw bad(`${at} is ${p.type}, which a ${role} message cannot carry; media go in user messages.`, `${at}.type`);
    throw bad(`Unsupported content part type '${clip(String(p.type))}' at ${at}; use text, image_url, video_url, input_audio or file.`, `${at}.type`);
  });
}

/** Maps validated chat messages; throws 400 naming the param for content the conversation cannot hold. */
export function chatToConversation(messages: ChatMessageIn[]): Conversation {
  const conv: Conversation = [];
  messages.forEach((m, i) => {
    const path = `messages.${i}.content`;
    switch (m.role) {
      case "system":
      case "developer":
        return pushTurn(conv, { role: "system", parts: contentParts(m.content, path, "system") });
      case "user": {
        if (m.content === null || m.content === undefined) throw bad(`messages.${i} (role 'user') needs content.`, path);
        return pushTurn(conv, { role: "user", parts: contentParts(m.content, path, "user") });
      }
      case "assistant": {
        const parts: Part[] = contentParts(m.content, path, "assistant");
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
          parts: [{ type: "tool_result", callId: m.tool_call_id ?? "", parts: contentParts(m.content, path, "tool"), isError: false }],
        }, true);
      default:
        throw bad(`messages.${i}.role '${clip(String(m.role))}' is not supported; use system, developer, user, assistant or tool.`, `messages.${i}.role`);
    }
  });
  return conv;
}
