// What every API family's request comes down to: the neutral conversation plus generation controls.
import type { BuiltinTool } from "./builtin-tool.ts";
import type { Conversation } from "./conversation.ts";
import type { ToolChoice, ToolDef } from "./tool-def.ts";

/** What the answer must be: free text, any JSON object, or an instance of a JSON schema. */
export type AnswerFormat = { kind: "text" } | { kind: "json" } | { kind: "json_schema"; name: string; schema: Record<string, unknown> | null; strict?: boolean };

export interface CoreRequest {
  conversation: Conversation;
  tools: ToolDef[] | null;
  toolChoice: ToolChoice;
  answerFormat: AnswerFormat;
  n: number;
  /** null: whatever room the context window leaves. */
  maxTokens: number | null;
  temperature: number;
  topP: number;
  /** Only the k most likely tokens may be sampled. */
  topK?: number;
  seed: number | null;
  stop: string[];
  /** Keep generating past end-of-turn tokens (fixed-length benchmarks). */
  ignoreEos: boolean;
  /** Extra variables for the chat template (e.g. enable_thinking), passed through as given. */
  templateOptions?: Record<string, unknown>;
  /** Most thinking tokens before kiln closes the thinking block itself (a model that reasons). */
  thinkingBudget?: number;
  /** Text the assistant turn already starts with: the answer continues it. */
  assistantPrefill?: string;
  /** Tools kiln runs itself (tool-loop.ts); their definitions are among `tools` too. */
  builtins?: BuiltinTool[];
}
