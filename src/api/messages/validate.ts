// A Messages request beyond its schema: roles, block shapes, signed thinking, tools and thinking → the core request.
// Consecutive messages of one role are one turn; a final assistant turn is a prefill the answer continues.
import type { Sealer } from "../../crypto/sealing.ts";
import { SealError } from "../../crypto/sealing.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import type { CoreRequest } from "../../inference/request.ts";
import type { ToolChoice, ToolDef } from "../../inference/tool-def.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import type { MessagesRequestBody } from "./schema.ts";
import { combineTurns } from "./combine-turns.ts";
import { messagesThinking } from "./thinking.ts";
import { type MessagesBlock, type MessagesMessage, messagesToConversation } from "./to-conversation.ts";

const bad = (message: string, param: string | null) => ApiError.badRequest(message, param);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const USER_BLOCKS = new Set(["text", "image", "tool_result"]);
const ASSISTANT_BLOCKS = new Set(["text", "tool_use", "thinking", "redacted_thinking"]);

type RawBlock = Exclude<MessagesRequestBody["messages"][number]["content"], string>[number];

/** An image block's source: base64 with data, a url, or a file_id. */
function checkImageSource(source: unknown, at: string): void {
  const s = source as { type?: string; data?: unknown; media_type?: unknown; url?: unknown; file_id?: unknown } | undefined;
  const ok = s?.type === "base64" ? typeof s.data === "string" && s.data.length > 0 && typeof s.media_type === "string"
    : s?.type === "url" ? typeof s.url === "string" && s.url.length > 0
    : s?.type === "file" ? typeof s.file_id === "string" && s.file_id.length > 0
    : false;
  if (!ok) throw bad(`${at}.source must be {type:"base64", media_type, data}, {type:"url", url} or {type:"file", file_id}.`, `${at}.source`);
}

/** A tool_result's content blocks: text or image. */
function checkResultBlocks(blocks: unknown[], at: string): void {
  blocks.forEach((raw, k) => {
    const b = raw as { type?: unknown; text?: unknown; source?: unknown } | null;
    const here = `${at}.content.${k}`;
    if (b?.type === "text" && typeof b.text === "string") return;
    if (b?.type === "image") return checkImageSource(b.source, here);
    throw bad(`${here} must be a text block or an image block.`, here);
  });
}

/** Roles are user or assistant, starting with user; each block has the fields its type needs. */
export function checkMessages(messages: MessagesRequestBody["messages"]): void {
  messages.forEach((m, i) => {
    if (m.role !== "user" && m.role !== "assistant") throw bad(`messages.${i}.role '${clip(String(m.role))}' is not supported; use user or assistant.`, `messages.${i}.role`);
    if (i === 0 && m.role !== "user") throw bad("messages.0 must have role 'user': the conversation starts with a user turn.", "messages.0.role");
    if (typeof m.content === "string") return;
    if (!m.content.length) throw bad(`messages.${i}.content must not be empty.`, `messages.${i}.content`);
    m.content.forEach((b: RawBlock, j) => {
      const at = `messages.${i}.content.${j}`;
      const allowed = m.role === "user" ? USER_BLOCKS : ASSISTANT_BLOCKS;
      if (!allowed.has(b.type)) throw bad(`${at} has type '${clip(b.type)}', which a ${m.role} message cannot carry.`, `${at}.type`);
      if (b.type === "text" && typeof b.text !== "string") throw bad(`${at} needs text.`, `${at}.text`);
      if (b.type === "tool_use" && (!b.id || !b.name || !b.input)) throw bad(`${at} (tool_use) needs id, name and input.`, at);
      if (b.type === "tool_result" && !b.tool_use_id) throw bad(`${at} (tool_result) needs tool_use_id.`, `${at}.tool_use_id`);
      if (b.type === "tool_result" && Array.isArray(b.content)) checkResultBlocks(b.content, at);
      if (b.type === "thinking" && (typeof b.thinking !== "string" || typeof b.signature !== "string")) throw bad(`${at} (thinking) needs thinking and signature.`, at);
      if (b.type === "redacted_thinking" && typeof b.data !== "string") throw bad(`${at} (redacted_thinking) needs data.`, `${at}.data`);
      if (b.type === "image") checkImageSource(b.source, at);
    });
  });
  // Every tool_result answers a tool_use of the assistant turn right before it (consecutive messages are one turn).
  let uses = new Set<string | undefined>();
  messages.forEach((m, i) => {
    if (m.role === "assistant") {
      if (messages[i - 1]?.role !== "assistant") uses = new Set();
      if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use") uses.add(b.id);
      return;
    }
    if (typeof m.content === "string") return;
    m.content.forEach((b: RawBlock, j) => {
      if (b.type === "tool_result" && !uses.has(b.tool_use_id)) {
        throw bad(`messages.${i}.content.${j}.tool_use_id '${clip(String(b.tool_use_id))}' does not match a tool_use of the assistant turn before it.`, `messages.${i}.content.${j}.tool_use_id`);
      }
    });
  });
}

/** Replayed thinking must carry the signature kiln gave it; redacted thinking must open. Returns blocks with text restored. */
function verifyThinking(messages: MessagesRequestBody["messages"], model: string, sealer: Sealer): MessagesMessage[] {
  return messages.map((m, i) => {
    if (typeof m.content === "string") return m as MessagesMessage;
    const content = m.content.map((b: RawBlock, j): MessagesBlock => {
      const at = `messages.${i}.content.${j}`;
      if (b.type === "thinking" && !sealer.verify(b.thinking!, b.signature!, model)) {
        throw bad(`${at} is thinking whose signature does not match: it was changed, or made by another model or server.`, `${at}.signature`);
      }
      if (b.type === "redacted_thinking") {
        try {
          return { type: "thinking", thinking: sealer.open(b.data!, model), signature: "" };
        } catch (e) {
          if (e instanceof SealError) throw bad(`${at} is redacted thinking that could not be opened.`, `${at}.data`);
          throw e;
        }
      }
      return b as MessagesBlock;
    });
    return { role: m.role as "user" | "assistant", content };
  });
}

function tools(body: MessagesRequestBody, model: ModelInfo): ToolDef[] | null {
  if (!body.tools?.length) return null;
  if (!model.capabilities.tools) throw bad(`The model '${model.id}' does not support tools.`, "tools");
  const seen = new Set<string>();
  return body.tools.map((tool, i) => {
    if (tool.type && tool.type !== "custom") throw bad(`tools.${i}.type '${clip(tool.type)}' is not supported; kiln runs client tools only.`, `tools.${i}.type`);
    if (!TOOL_NAME.test(tool.name)) throw bad(`tools.${i}.name '${clip(tool.name)}' must match ^[a-zA-Z0-9_-]{1,64}$.`, `tools.${i}.name`);
    if (seen.has(tool.name)) throw bad(`tools.${i}.name '${tool.name}' is declared twice.`, `tools.${i}.name`);
    seen.add(tool.name);
    return { type: "function", function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.input_schema } };
  });
}

function toolChoice(body: MessagesRequestBody, defs: ToolDef[] | null): ToolChoice {
  const tc = body.tool_choice;
  if (!tc) return defs ? "auto" : "none";
  if (tc.type === "none") return "none";
  if (!defs) throw bad(`tool_choice '${tc.type}' needs tools.`, "tool_choice");
  if (tc.type === "auto") return "auto";
  // `any`: one of the tools must be called; the core constrains the call to one of them.
  if (tc.type === "any") return "any";
  if (!tc.name || !defs.some((d) => d.function.name === tc.name)) throw bad(`tool_choice names '${clip(String(tc.name ?? ""))}', which is not among tools.`, "tool_choice.name");
  return { name: tc.name };
}

export interface MessagesPlan {
  request: CoreRequest;
  /** Text of a final assistant message: the answer continues it (and does not repeat it). */
  prefill: string | null;
}

/**
 * The text of a final assistant turn (the run of assistant messages at the end), which the answer continues; null
 * when the conversation ends with a user turn. Only text may be prefilled.
 */
function prefillOf(messages: readonly MessagesMessage[]): string | null {
  let first = messages.length;
  while (first > 0 && messages[first - 1]!.role === "assistant") first--;
  if (first === messages.length) return null;
  let text = "";
  for (let i = first; i < messages.length; i++) {
    const content = messages[i]!.content;
    if (typeof content === "string") text += content;
    else if (content.some((b) => b.type !== "text")) throw bad(`A final assistant message is a prefill and may only hold text (messages.${i}).`, `messages.${i}.content`);
    else text += content.map((b) => (b.type === "text" ? b.text : "")).join("");
  }
  return text.replace(/\s+$/, "");
}

export function messagesRequest(body: MessagesRequestBody, model: ModelInfo, sealer: Sealer): MessagesPlan {
  checkMessages(body.messages);
  const thinking = messagesThinking(body, model);
  const verified = verifyThinking(body.messages, model.id, sealer);
  const prefill = prefillOf(verified);
  const turns = combineTurns(verified);
  if (prefill !== null) turns.pop();
  const defs = tools(body, model);
  return {
    request: {
      conversation: messagesToConversation(body.system, turns),
      tools: defs,
      toolChoice: toolChoice(body, defs),
      ...(body.tool_choice?.disable_parallel_tool_use ? { singleToolCall: true } : {}),
      answerFormat: { kind: "text" },
      n: 1,
      maxTokens: body.max_tokens,
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      seed: null,
      stop: body.stop_sequences ?? [],
      ignoreEos: false,
      ...thinking,
      ...(prefill ? { assistantPrefill: prefill } : {}),
      ...(body.top_k ? { topK: body.top_k } : {}),
    },
    prefill: prefill || null,
  };
}
