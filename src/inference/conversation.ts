// The neutral conversation every wire format maps onto: turns with a role and ordered parts. Each family's
// messages, items or blocks become this; the per-model prompt format renders it for the template.

/** Where an image comes from; the media layer resolves it to bytes. */
export type ImageSource =
  | { kind: "url"; url: string }
  | { kind: "file"; fileId: string }
  | { kind: "base64"; mediaType: string; data: string };

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image";
  source: ImageSource;
  detail?: "auto" | "low" | "high";
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
  parts: (TextPart | ImagePart)[];
  isError: boolean;
}

export type Part = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart;

/**
 * system: instructions; user: text and images; assistant: reasoning, text and tool calls in the order produced;
 * tool: the results of the calls of the assistant turn before it, one part per call.
 */
export interface Turn {
  role: "system" | "user" | "assistant" | "tool";
  parts: Part[];
}

export type Conversation = Turn[];

/** The concatenated text parts of a list of parts (images and other parts are skipped). */
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
