// The neutral conversation every wire format maps onto: turns with a role and ordered parts. Each family's
// messages, items or blocks become this; the per-model prompt format renders it for the template.
import type { DecodedMedia, Medium } from "./media.ts";

/** Where a medium's bytes come from; media intake (src/media/intake.ts) reads them. */
export type MediaSource =
  | { kind: "url"; url: string }
  | { kind: "file"; fileId: string }
  /** Inline base64; `mediaType` is what the client declared (a data URL's type, a format name), if anything. */
  | { kind: "base64"; mediaType: string | null; data: string }
  /** Bytes that came with the request itself (a multipart upload), already read under the inline limit. */
  | { kind: "upload"; bytes: Uint8Array };

export interface TextPart {
  type: "text";
  text: string;
}

/**
 * An image, audio clip, video or file in the conversation. `declared` is what the client said it sends ("file": an
 * input file, whatever its bytes turn out to be); `at` names the item as the client wrote it, for errors. Intake
 * fills `decoded` before the prompt is built, so the core never sees undecoded media.
 */
export interface MediaPart {
  type: "media";
  declared: Medium | "file";
  source: MediaSource;
  at: string;
  detail?: "auto" | "low" | "high";
  /** The name a client gave an input file, for the prompt when the file turns out to be text. */
  filename?: string;
  decoded?: DecodedMedia;
}

/**
 * A model's thinking. `text` is what the prompt replays. A client replays it either sealed (`sealed`: an
 * authenticated ciphertext kiln made) or signed (`signature`: a MAC kiln made beside the text); the family checks
 * the seal or signature before the core sees the turn.
 */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  id?: string;
  sealed?: string;
  signature?: string;
}

export interface ToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  /** Parsed: templates receive an object, as Hugging Face templates expect (several apply `tojson` to it). */
  arguments: Record<string, unknown>;
}

export interface ToolResultPart {
  type: "tool_result";
  callId: string;
  parts: (TextPart | MediaPart)[];
  isError: boolean;
}

export type Part = TextPart | MediaPart | ReasoningPart | ToolCallPart | ToolResultPart;

/**
 * system: instructions; user: text and media; assistant: reasoning, text and tool calls in the order produced;
 * tool: the results of the calls of the assistant turn before it, one part per call.
 */
export interface Turn {
  role: "system" | "user" | "assistant" | "tool";
  parts: Part[];
}

export type Conversation = Turn[];

/** The concatenated text parts of a list of parts (media and other parts are skipped). */
export function textOf(parts: readonly Part[]): string {
  let out = "";
  for (const p of parts) if (p.type === "text") out += p.text;
  return out;
}

/**
 * Appends a turn; with `merge`, a turn of the same role as the last one joins it instead. Wire formats split one
 * logical turn differently (a reasoning item, then a message, then call items; or one tool message per call), and
 * the prompt should not depend on how.
 */
export function pushTurn(conv: Conversation, turn: Turn, merge = false): void {
  const last = conv[conv.length - 1];
  if (merge && last && last.role === turn.role) last.parts.push(...turn.parts);
  else conv.push({ role: turn.role, parts: [...turn.parts] });
}

/** Parses a tool call's JSON argument string into the object templates expect; null when it is not a JSON object. */
export function parseArguments(json: string): Record<string, unknown> | null {
  if (!json.trim()) return {};
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Every media part of a conversation, tool results' included, in order. */
export function mediaParts(conv: Conversation): MediaPart[] {
  const out: MediaPart[] = [];
  for (const turn of conv) {
    for (const p of turn.parts) {
      if (p.type === "media") out.push(p);
      else if (p.type === "tool_result") for (const q of p.parts) if (q.type === "media") out.push(q);
    }
  }
  return out;
}
