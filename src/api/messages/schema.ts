// typebox schemas of POST /v1/messages and /v1/messages/count_tokens (Anthropic Messages-compatible) and the message object.
// Content blocks are checked loosely here and exactly in validate.ts, so each violation names its block.
import { t } from "elysia";
import { Int, nullable } from "../schema-helpers.ts";
import { MessagesTierField } from "../service-tier-field.ts";

const Block = t.Object(
  {
    type: t.String({ description: "text | image | tool_use | tool_result | thinking | redacted_thinking" }),
    text: t.Optional(t.String()),
    id: t.Optional(t.String()),
    name: t.Optional(t.String()),
    input: t.Optional(t.Record(t.String(), t.Unknown())),
    tool_use_id: t.Optional(t.String()),
    content: t.Optional(t.Union([t.String(), t.Array(t.Record(t.String(), t.Unknown()))])),
    is_error: nullable(t.Boolean()),
    thinking: t.Optional(t.String()),
    signature: t.Optional(t.String()),
    data: t.Optional(t.String()),
    source: t.Optional(t.Record(t.String(), t.Unknown())),
  },
  { additionalProperties: true },
);

const Message = t.Object(
  {
    role: t.String({ description: "user | assistant" }),
    content: t.Union([t.String(), t.Array(Block)], { error: "content must be a string or an array of content blocks" }),
  },
  { additionalProperties: true },
);

const Tool = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64 }),
    description: t.Optional(t.String()),
    input_schema: t.Record(t.String(), t.Unknown(), { description: "JSON Schema of the tool's input object" }),
    type: t.Optional(t.String()),
  },
  { additionalProperties: true },
);

const ToolChoice = t.Object(
  {
    type: t.Union([t.Literal("auto"), t.Literal("any"), t.Literal("tool"), t.Literal("none")], { error: "tool_choice.type must be auto, any, tool or none" }),
    name: t.Optional(t.String()),
    disable_parallel_tool_use: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);

const Thinking = t.Object(
  {
    type: t.Union([t.Literal("enabled"), t.Literal("adaptive"), t.Literal("disabled")], { error: 'thinking.type must be "enabled", "adaptive" or "disabled"' }),
    budget_tokens: t.Optional(Int({ minimum: 1024, error: "thinking.budget_tokens must be a whole number of at least 1024" })),
  },
  { additionalProperties: true },
);

/** Anthropic's effort levels, from least to most work (src/api/messages/thinking.ts maps them onto kiln's). */
export const ANTHROPIC_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

const OutputConfig = t.Object(
  {
    effort: t.Optional(t.Union(ANTHROPIC_EFFORTS.map((e) => t.Literal(e)), { error: `output_config.effort must be one of ${ANTHROPIC_EFFORTS.join(", ")}` })),
  },
  { additionalProperties: true },
);

export const MessagesRequest = t.Object(
  {
    model: t.String({ minLength: 1, description: "A model id from GET /v1/models." }),
    max_tokens: Int({ minimum: 1, error: "max_tokens must be a whole number of at least 1" }),
    messages: t.Array(Message, { minItems: 1, error: "messages must be a non-empty array of messages" }),
    system: t.Optional(t.Union([t.String(), t.Array(t.Object({ type: t.Literal("text"), text: t.String() }, { additionalProperties: true }))], { error: "system must be a string or an array of text blocks" })),
    stop_sequences: t.Optional(t.Array(t.String({ minLength: 1 }), { maxItems: 16, error: "stop_sequences must be an array of non-empty strings" })),
    temperature: t.Optional(t.Number({ minimum: 0, maximum: 2, error: "temperature must be a number between 0 and 2" })),
    top_p: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 1, error: "top_p must be greater than 0 and at most 1" })),
    top_k: t.Optional(Int({ minimum: 1, error: "top_k must be a whole number of at least 1" })),
    metadata: t.Optional(t.Object({ user_id: nullable(t.String()) }, { additionalProperties: true })),
    service_tier: MessagesTierField,
    stream: t.Optional(t.Boolean({ error: "stream must be true or false" })),
    tools: t.Optional(t.Array(Tool, { maxItems: 128 })),
    tool_choice: t.Optional(ToolChoice),
    thinking: t.Optional(Thinking),
    output_config: t.Optional(OutputConfig),
  },
  {
    additionalProperties: true,
    examples: [
      {
        model: "kiln-tiny-v1",
        max_tokens: 1024,
        system: "You are terse.",
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        tools: [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
        tool_choice: { type: "auto" },
        stop_sequences: ["\n\nHuman:"],
        temperature: 0.7,
        top_p: 1,
        top_k: 40,
        metadata: { user_id: "user-42" },
        stream: false,
      },
    ],
  },
);
export type MessagesRequestBody = typeof MessagesRequest.static;

export const MessageObject = t.Object(
  {
    id: t.String({ description: "msg_…" }),
    type: t.Literal("message"),
    role: t.Literal("assistant"),
    model: t.String(),
    content: t.Array(t.Record(t.String(), t.Unknown(), { description: "text, thinking (with signature) or tool_use (toolu_ id, parsed input) block" })),
    stop_reason: t.Union([t.Literal("end_turn"), t.Literal("max_tokens"), t.Literal("stop_sequence"), t.Literal("tool_use"), t.Null()]),
    stop_sequence: t.Union([t.String(), t.Null()]),
    usage: t.Object(
      {
        input_tokens: Int({ description: "prompt tokens not read from the prefix cache" }),
        cache_creation_input_tokens: Int({ description: "always 0: kiln caches prompt prefixes by itself, at no extra charge" }),
        cache_read_input_tokens: Int({ description: "prompt tokens read from the prefix cache" }),
        output_tokens: Int(),
        service_tier: t.Optional(t.Union([t.Literal("standard"), t.Literal("priority"), t.Literal("batch")], { description: "the lane the request ran in" })),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    examples: [
      {
        id: "msg_1f3…", type: "message", role: "assistant", model: "kiln-tiny-v1",
        content: [{ type: "tool_use", id: "toolu_9c0…", name: "get_weather", input: { city: "Paris" } }],
        stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 48, output_tokens: 18 },
      },
    ],
  },
);

export const CountTokensObject = t.Object({ input_tokens: Int() }, { examples: [{ input_tokens: 52 }] });
