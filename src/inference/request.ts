// What every API family's request comes down to: the neutral conversation plus generation controls.
import type { BuiltinTool } from "./builtin-tool.ts";
import type { Conversation } from "./conversation.ts";
import type { ToolChoice, ToolDef } from "./tool-def.ts";

/** What the answer must be: free text, any JSON object, or an instance of a JSON schema. */
export type AnswerFormat = { kind: "text" } | { kind: "json" } | { kind: "json_schema"; name: string; schema: Record<string, unknown> | null; strict?: boolean };

export interface CoreRequest {
  conversation: Conversation;
  /** The prompt as given, without the chat template (the legacy completions format): text, or token ids; the conversation is then empty. */
  rawPrompt?: string | number[];
  tools: ToolDef[] | null;
  toolChoice: ToolChoice;
  /** At most one tool call in the answer (parallel_tool_calls: false, disable_parallel_tool_use: true); absent: any number. */
  singleToolCall?: boolean;
  answerFormat: AnswerFormat;
  n: number;
  /** null: whatever room the context window leaves. */
  maxTokens: number | null;
  temperature: number;
  topP: number;
  /** Only the k most likely tokens may be sampled. */
  topK?: number;
  /** Min-p, penalties and logit bias, where the family has fields for them. */
  samplers?: Samplers;
  /** Report the answer tokens' log probabilities with this many alternatives each (0–20); absent: none. */
  logprobs?: number;
  /** Report the prompt tokens' log probabilities too, with this many alternatives each (legacy completions' echo). */
  promptLogprobs?: number;
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

/** The optional samplers a family maps its fields onto; each row of a batch keeps its own. */
export interface Samplers {
  minP?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  repetitionPenalty?: number;
  /** [token id, bias] pairs, ids as the model's tokenizer numbers them. */
  logitBias?: [number, number][];
  /** The request field a logit bias came from, named when one of its ids is outside the vocabulary. */
  biasParam?: string;
}
