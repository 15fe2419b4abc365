// Per-model prompt and output formats: what the chat template receives, and which markers the output parser looks
// for (tool calls, thinking), the forced tool-call prefix and the JSON-mode instruction. Declared in kiln.json's
// `prompt_format`, or derived from the folder's chat template and vocabulary.
import { type Conversation, type MediaPart, type Part, textOf } from "./conversation.ts";

export interface Markers {
  open: string;
  close: string;
}

export interface PromptFormat {
  /** Markers around one tool call's JSON ({"name", "arguments"}); null when the model has no tool-call syntax. */
  toolCall: Markers | null;
  /** Markers around the model's thinking; null when it does not think in the open. */
  thinking: Markers | null;
  /** The assistant text that opens a call of `{name}` so the model writes only its arguments object. */
  forcedToolPrefix: string | null;
  /** The system instruction for JSON mode; `{schema}` is replaced by " matching this JSON schema: …" or nothing. */
  jsonInstruction: string;
}

/** Hermes/Qwen-style markers, which kiln's own models and many open models use. */
export const HERMES_TOOL_CALL: Markers = { open: "<tool_call>", close: "</tool_call>" };
export const THINK: Markers = { open: "<think>", close: "</think>" };
const HERMES_PREFIX = '<tool_call>\n{"name": {name}, "arguments": ';
const JSON_INSTRUCTION = "Respond with a single JSON object{schema}, and nothing else.";

type Json = Record<string, unknown>;

function markers(v: unknown, what: string): Markers | null {
  if (v === null) return null;
  const o = v as Json;
  if (!o || typeof o !== "object" || typeof o.open !== "string" || typeof o.close !== "string" || !o.open || !o.close) {
    throw new Error(`"prompt_format.${what}" must be {"open": …, "close": …} or null`);
  }
  return { open: o.open, close: o.close };
}

/**
 * The prompt format of a model folder: `declared` (kiln.json's prompt_format) wins field by field; the rest is derived
 * from the chat template's text and the vocabulary (a marker counts only if the tokenizer knows it as one token or
 * the template writes it).
 */
export function resolvePromptFormat(declared: unknown, template: string, hasToken: (t: string) => boolean): PromptFormat {
  const d = (declared ?? {}) as Json;
  if (typeof d !== "object" || Array.isArray(d)) throw new Error(`"prompt_format" must be an object`);
  const knows = (t: string) => hasToken(t) || template.includes(t);
  const toolCall = "tool_call" in d ? markers(d.tool_call, "tool_call") : knows(HERMES_TOOL_CALL.open) ? HERMES_TOOL_CALL : null;
  const thinking = "thinking" in d ? markers(d.thinking, "thinking") : knows(THINK.open) && knows(THINK.close) ? THINK : null;
  const prefix = d.forced_tool_prefix;
  if (prefix !== undefined && prefix !== null && (typeof prefix !== "string" || !prefix.includes("{name}"))) {
    throw new Error(`"prompt_format.forced_tool_prefix" must be a string containing {name}, or null`);
  }
  const instruction = d.json_instruction ?? JSON_INSTRUCTION;
  if (typeof instruction !== "string") throw new Error(`"prompt_format.json_instruction" must be a string`);
  return {
    toolCall,
    thinking,
    forcedToolPrefix: prefix === undefined ? (toolCall === HERMES_TOOL_CALL ? HERMES_PREFIX : null) : (prefix as string | null),
    jsonInstruction: instruction,
  };
}

/** The forced prefix for a call of `name`, or null when the format has none. */
export function forcedPrefixFor(format: PromptFormat, name: string): string | null {
  return format.forcedToolPrefix?.replace("{name}", JSON.stringify(name)) ?? null;
}

export function jsonInstructionFor(format: PromptFormat, schema: Json | null): string {
  return format.jsonInstruction.replace("{schema}", schema ? ` matching this JSON schema: ${JSON.stringify(schema)}` : "");
}

/** A content part as Hugging Face multimodal templates receive it: text, or one media placeholder. */
export type TemplatePart = { type: "text"; text: string } | { type: "image" } | { type: "audio" };

/** The placeholders a media part takes in the prompt, in order (src/inference/media-placement.ts). */
export type MediaSlotsOf = (part: MediaPart) => readonly { kind: "image" | "audio" }[];

/**
 * How a multimodal model's template is given media: as content parts (the Hugging Face convention), or, for a
 * template that only takes string content (Llama-3-style templates of Ultravox folders), as each placeholder's token
 * text written inline where the medium sits.
 */
export interface MediaPlaceholders {
  slots: MediaSlotsOf;
  inline?: { image?: string; audio?: string };
}

/** A message as Hugging Face chat templates receive it. */
export interface TemplateMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** A string; a list of parts only where media sit, as multimodal templates expect. */
  content: string | TemplatePart[];
  reasoning_content?: string;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: Record<string, unknown> } }[];
  tool_call_id?: string;
  name?: string;
}


/** A message's content: its text, or for a multimodal model (`placeholders`) its text and media placeholders. */
function contentOf(parts: readonly Part[], placeholders: MediaPlaceholders | undefined, lead = ""): string | TemplatePart[] {
  if (!placeholders) return lead + textOf(parts);
  const inline = placeholders.inline;
  if (inline) {
    let text = lead;
    for (const p of parts) {
      if (p.type === "text") text += p.text;
      else if (p.type === "media") for (const slot of placeholders.slots(p)) text += inline[slot.kind] ?? "";
    }
    return text;
  }
  const out: TemplatePart[] = lead ? [{ type: "text", text: lead }] : [];
  for (const p of parts) {
    if (p.type === "text") out.push({ type: "text", text: p.text });
    else if (p.type === "media") for (const slot of placeholders.slots(p)) out.push({ type: slot.kind });
  }
  return out;
}

/**
 * The conversation as template messages: an assistant turn's reasoning becomes `reasoning_content`, its calls
 * `tool_calls` with object arguments; a tool turn becomes one `tool` message per result, named after its call.
 * With `placeholders` (a multimodal model), content is a list of parts, media becoming `{type: "image"}` /
 * `{type: "audio"}` where they sit, as Hugging Face multimodal templates expect.
 */
export function templateMessages(conv: Conversation, placeholders?: MediaPlaceholders): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  const callNames = new Map<string, string>();
  for (const turn of conv) {
    if (turn.role === "tool") {
      for (const p of turn.parts) {
        if (p.type !== "tool_result") continue;
        const name = callNames.get(p.callId);
        out.push({ role: "tool", content: contentOf(p.parts, placeholders, p.isError ? "Error: " : ""), tool_call_id: p.callId, ...(name ? { name } : {}) });
      }
      continue;
    }
    const m: TemplateMessage = { role: turn.role, content: contentOf(turn.parts, placeholders) };
    if (turn.role === "assistant") {
      const reasoning = turn.parts.filter((p) => p.type === "reasoning").map((p) => p.text).filter(Boolean);
      if (reasoning.length) m.reasoning_content = reasoning.join("\n");
      const calls = turn.parts.flatMap((p) => (p.type === "tool_call" ? [p] : []));
      if (calls.length) {
        m.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
        for (const c of calls) callNames.set(c.id, c.name);
      }
    }
    out.push(m);
  }
  return out;
}
