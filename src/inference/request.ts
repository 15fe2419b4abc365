// What every API family's request comes down to: the neutral conversation plus generation controls.
import type { Conversation } from "./conversation.ts";
import type { WebSearchSetup } from "./tool-loop.ts";

/** A function tool, in the shape chat templates receive (`{type: "function", function: {…}}`). */
export interface ToolDef {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export type ResponseFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown> | null; strict?: boolean };

export interface CoreRequest {
  conversation: Conversation;
  tools: ToolDef[] | null;
  toolChoice: ToolChoice;
  responseFormat: ResponseFormat;
  n: number;
  /** null: whatever room the context window leaves. */
  maxTokens: number | null;
  temperature: number;
  topP: number;
  /** Only the k most likely tokens may be sampled (Messages' top_k). */
  topK?: number;
  seed: number | null;
  stop: string[];
  /** Keep generating past end-of-turn tokens (fixed-length benchmarks). */
  ignoreEos: boolean;
  /** Extra variables for the chat template (e.g. enable_thinking), passed through as given. */
  templateOptions?: Record<string, unknown>;
  /** Most thinking tokens before kiln closes the thinking block itself (a model that reasons; from the effort). */
  thinkingBudget?: number;
  /** Text the assistant turn already starts with (Messages' final assistant message): the answer continues it. */
  assistantPrefill?: string;
  /** The built-in web_search tool is on (src/inference/tool-loop.ts runs the searches); only Responses sets it. */
  webSearch?: WebSearchSetup;
}
