// The normalized conversation every API family converts its input into before the chat template renders it.

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  reasoning_content?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface ToolDef {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export type ResponseFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown> | null };

/** What every API family's request comes down to, besides the model and the abort signal. */
export interface GenerationParams {
  messages: ChatMessage[];
  tools: ToolDef[] | null;
  toolChoice: ToolChoice;
  responseFormat: ResponseFormat;
  n: number;
  /** null: whatever room the context window leaves. */
  maxTokens: number | null;
  temperature: number;
  topP: number;
  seed: number | null;
  stop: string[];
  /** Keep generating past end-of-turn tokens (fixed-length benchmarks). */
  ignoreEos: boolean;
}
