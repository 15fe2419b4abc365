// typebox schemas of POST /v1/chat/completions (request, response and stream chunk), OpenAI-compatible.
import { t } from "elysia";
import { SAMPLER_PROPERTIES } from "../sampler-fields.ts";
import { completionHead, EffortSchema, Int, nullable } from "../schema-helpers.ts";
import { EchoedTier, ServiceTierField } from "../service-tier-field.ts";

const ContentPart = t.Object(
  {
    type: t.String({ description: "text | image_url | video_url | input_audio | file (media in user messages, for a model that takes them)" }),
    text: t.Optional(t.String()),
    image_url: t.Optional(t.Object({ url: t.String({ description: "https URL or data URL" }), detail: t.Optional(t.String()) }, { additionalProperties: true })),
    input_audio: t.Optional(t.Object({ data: t.String({ description: "base64 audio" }), format: t.Optional(t.String()) }, { additionalProperties: true })),
    video_url: t.Optional(t.Object({ url: t.String({ description: "https URL or data URL of a video (as vLLM and SGLang take it)" }) }, { additionalProperties: true })),
    file: t.Optional(t.Object({ file_id: t.Optional(t.String()), file_data: t.Optional(t.String()), filename: t.Optional(t.String()) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

const ToolCall = t.Object({
  id: t.String(),
  type: t.Literal("function"),
  function: t.Object({ name: t.String(), arguments: t.String() }),
});

export const ChatMessageIn = t.Object(
  {
    role: t.String({ description: "system | developer | user | assistant | tool" }),
    content: nullable(t.Union([t.String(), t.Array(ContentPart)]), "content must be a string, an array of content parts, or null"),
    name: t.Optional(t.String()),
    tool_calls: t.Optional(t.Array(ToolCall)),
    tool_call_id: t.Optional(t.String()),
    reasoning_content: nullable(t.String()),
  },
  { additionalProperties: true },
);

export const FunctionTool = t.Object({
  type: t.Literal("function"),
  function: t.Object({
    name: t.String({ minLength: 1, maxLength: 64 }),
    description: t.Optional(t.String()),
    parameters: t.Optional(t.Record(t.String(), t.Unknown())),
    strict: nullable(t.Boolean()),
  }),
});

const ToolChoice = t.Union(
  [
    t.Literal("none"),
    t.Literal("auto"),
    t.Literal("required"),
    t.Object({ type: t.Literal("function"), function: t.Object({ name: t.String() }) }),
  ],
  { error: 'tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}' },
);

const ResponseFormat = t.Union(
  [
    t.Object({ type: t.Literal("text") }),
    t.Object({ type: t.Literal("json_object") }),
    t.Object({
      type: t.Literal("json_schema"),
      json_schema: t.Object({ name: t.String(), schema: t.Optional(t.Record(t.String(), t.Unknown())), strict: nullable(t.Boolean()), description: t.Optional(t.String()) }),
    }),
  ],
  { error: 'response_format must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","json_schema":{…}}' },
);

export const ChatRequest = t.Object(
  {
    model: t.String({ minLength: 1, description: "A model id from GET /v1/models." }),
    messages: t.Array(ChatMessageIn, { minItems: 1, error: "messages must be a non-empty array of messages" }),
    temperature: nullable(t.Number({ minimum: 0, maximum: 2 }), "temperature must be a number between 0 and 2"),
    top_p: nullable(t.Number({ exclusiveMinimum: 0, maximum: 1 }), "top_p must be greater than 0 and at most 1"),
    n: nullable(Int({ minimum: 1, maximum: 16 }), "n must be a whole number from 1 to 16"),
    max_tokens: nullable(Int({ minimum: 1 }), "max_tokens must be a whole number of at least 1"),
    max_completion_tokens: nullable(Int({ minimum: 1 }), "max_completion_tokens must be a whole number of at least 1"),
    stream: nullable(t.Boolean(), "stream must be true or false"),
    stream_options: nullable(t.Object({ include_usage: t.Optional(t.Boolean()) })),
    stop: nullable(t.Union([t.String(), t.Array(t.String({ minLength: 1 }), { maxItems: 4 })]), "stop must be a string or an array of up to 4 strings"),
    seed: nullable(Int(), "seed must be a whole number"),
    tools: nullable(t.Array(FunctionTool, { maxItems: 128 })),
    tool_choice: nullable(ToolChoice),
    parallel_tool_calls: nullable(t.Boolean()),
    response_format: nullable(ResponseFormat),
    reasoning_effort: nullable(EffortSchema),
    logprobs: nullable(t.Boolean()),
    top_logprobs: nullable(Int()),
    ...SAMPLER_PROPERTIES,
    ignore_eos: nullable(t.Boolean({ description: "Extension (as in vLLM): keep generating past end-of-turn tokens, for fixed-length benchmarks." })),
    user: t.Optional(t.String()),
    metadata: nullable(t.Record(t.String(), t.String())),
    store: nullable(t.Boolean()),
    service_tier: ServiceTierField,
  },
  { additionalProperties: true },
);
export type ChatRequestBody = typeof ChatRequest.static;

const Usage = t.Object({
  prompt_tokens: Int(),
  completion_tokens: Int(),
  total_tokens: Int(),
  prompt_tokens_details: t.Object({ cached_tokens: Int({ description: "of prompt_tokens, those read from the prefix cache (0 on a miss)" }) }),
  completion_tokens_details: t.Optional(t.Object({ reasoning_tokens: Int() }, { description: "present when the model thought: how many completion tokens were reasoning" })),
});

const TopLogprob = t.Object({ token: t.String(), logprob: t.Number(), bytes: t.Array(Int()) });
const Logprobs = t.Object(
  { content: t.Array(t.Object({ ...TopLogprob.properties, top_logprobs: t.Array(TopLogprob) })), refusal: t.Null() },
  { description: "present when the request set logprobs: each answer token's log probability under the model, and its top_logprobs most likely alternatives" },
);

export const ChatCompletion = t.Object({
  ...completionHead("chatcmpl-", "chat.completion"),
  service_tier: EchoedTier,
  choices: t.Array(
    t.Object({
      index: Int(),
      message: t.Object({
        role: t.Literal("assistant"),
        content: t.Union([t.String(), t.Null()]),
        reasoning_content: t.Optional(t.String()),
        refusal: t.Null(),
        tool_calls: t.Optional(t.Array(ToolCall)),
      }),
      logprobs: t.Union([Logprobs, t.Null()]),
      finish_reason: t.Union([t.Literal("stop"), t.Literal("length"), t.Literal("tool_calls"), t.Literal("content_filter")]),
    }),
  ),
  usage: Usage,
});
export type ChatCompletionBody = typeof ChatCompletion.static;
