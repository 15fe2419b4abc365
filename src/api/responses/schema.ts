// typebox schemas of POST /v1/responses and /v1/responses/input_tokens (request) and the response object, OpenAI-compatible.
// Input items are checked loosely here and exactly in validate.ts, so each violation names the spec's param.
import { t } from "elysia";
import { WEB_SEARCH_NAMES } from "../../tools/web-search.ts";
import { EffortSchema, Int, nullable } from "../schema-helpers.ts";
import { EchoedTier, ServiceTierField } from "../service-tier-field.ts";

const Part = t.Object(
  {
    type: t.String({ description: "input_text | output_text | refusal | input_image | input_file | input_audio (media need a model that takes them)" }),
    text: t.Optional(t.String()),
    image_url: t.Optional(t.String({ description: "https URL or data URL of an image" })),
    file_id: nullable(t.String({ description: "an uploaded file's id (file-…), of the caller's team" })),
    file_data: t.Optional(t.String({ description: "input_file: base64 or a data URL (up to 50 MB)" })),
    file_url: t.Optional(t.String({ description: "input_file: a URL to fetch under the fetch policy" })),
    filename: t.Optional(t.String()),
    input_audio: t.Optional(t.Object({ data: t.String({ description: "base64 audio" }), format: t.Optional(t.String()) }, { additionalProperties: true })),
    detail: t.Optional(t.String()),
    refusal: t.Optional(t.String()),
  },
  { additionalProperties: true },
);

const InputItem = t.Object(
  {
    type: t.Optional(t.String({ description: "message (default) | function_call | function_call_output | reasoning" })),
    role: t.Optional(t.String({ description: "user | assistant | system | developer" })),
    // null: a reasoning item without content parts (Codex replays every reasoning item so).
    content: nullable(t.Union([t.String(), t.Array(Part)])),
    phase: nullable(t.String({ description: 'assistant text before a function_call carries "commentary"' })),
    id: nullable(t.String()),
    call_id: t.Optional(t.String()),
    name: t.Optional(t.String()),
    arguments: t.Optional(t.String()),
    output: t.Optional(t.Union([t.String(), t.Array(Part)])),
    summary: t.Optional(t.Array(t.Object({ type: t.String(), text: t.String() }, { additionalProperties: true }))),
    encrypted_content: nullable(t.String()),
    status: nullable(t.String()),
  },
  { additionalProperties: true },
);

export const ResponsesTool = t.Object(
  {
    type: t.String({
      description:
        `function, namespace (a named group of function tools in \`tools\`), or the built-in web search: ${WEB_SEARCH_NAMES.join(" | ")} ` +
        "(all the same tool; without KILN_WEB_SEARCH_URL it is not offered to the model, and forcing it is a 400). " +
        "While it is on, these names are reserved: a function tool may not take one (400, param tools).",
    }),
    name: t.Optional(t.String()),
    description: nullable(t.String()),
    parameters: nullable(t.Record(t.String(), t.Unknown())),
    strict: nullable(t.Boolean()),
    tools: t.Optional(t.Array(t.Record(t.String(), t.Unknown()), { description: "namespace: its function tools, each callable under its own name" })),
  },
  { additionalProperties: true },
);

const TextFormat = t.Object(
  {
    type: t.String({ description: "text | json_object | json_schema" }),
    name: t.Optional(t.String()),
    schema: t.Optional(t.Record(t.String(), t.Unknown())),
    strict: nullable(t.Boolean()),
    description: t.Optional(t.String()),
  },
  { additionalProperties: true },
);

export const ResponsesRequest = t.Object(
  {
    model: t.String({ minLength: 1, description: "A model id from GET /v1/models." }),
    input: t.Union([t.String(), t.Array(InputItem)], { error: "input must be a string or an array of input items" }),
    instructions: nullable(t.String({ description: "A system prompt placed before the input." })),
    max_output_tokens: nullable(Int({ minimum: 16 }), "max_output_tokens must be a whole number of at least 16"),
    temperature: nullable(t.Number({ minimum: 0, maximum: 2 }), "temperature must be a number between 0 and 2"),
    top_p: nullable(t.Number({ exclusiveMinimum: 0, maximum: 1 }), "top_p must be greater than 0 and at most 1"),
    tools: nullable(t.Array(ResponsesTool, { maxItems: 128 })),
    tool_choice: nullable(
      t.Union([t.Literal("none"), t.Literal("auto"), t.Literal("required"), t.Object({ type: t.String(), name: t.Optional(t.String()) }, { additionalProperties: true })], {
        error: 'tool_choice must be "none", "auto", "required", {"type":"function","name":…} or {"type":"web_search"}',
      }),
    ),
    parallel_tool_calls: nullable(t.Boolean()),
    text: nullable(t.Object({ format: t.Optional(TextFormat), verbosity: nullable(t.String()) }, { additionalProperties: true })),
    reasoning: nullable(t.Object({ effort: nullable(EffortSchema), summary: nullable(t.String({ description: "auto | concise | detailed" })) }, { additionalProperties: true })),
    reasoning_effort: nullable(EffortSchema),
    include: nullable(t.Array(t.String({ description: "reasoning.encrypted_content, web_search_call.action.sources or message.output_text.logprobs" }))),
    top_logprobs: nullable(Int(), "top_logprobs must be a whole number from 0 to 20"),
    metadata: nullable(t.Record(t.String(), t.String())),
    store: nullable(t.Boolean(), "store must be true or false"),
    stream: nullable(t.Boolean(), "stream must be true or false"),
    background: nullable(t.Boolean(), "background must be true or false"),
    previous_response_id: nullable(t.String()),
    user: nullable(t.String()),
    truncation: nullable(t.Union([t.Literal("auto"), t.Literal("disabled")], { error: 'truncation must be "auto" or "disabled"' })),
    seed: nullable(Int(), "seed must be a whole number"),
    service_tier: ServiceTierField,
  },
  {
    additionalProperties: true,
    examples: [
      {
        model: "kiln-tiny-v1",
        instructions: "Answer briefly.",
        input: [{ role: "user", content: [{ type: "input_text", text: "What is the weather in Paris?" }] }],
        tools: [{ type: "function", name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true }],
        tool_choice: "auto",
        parallel_tool_calls: true,
        text: { format: { type: "text" } },
        reasoning: { effort: "low", summary: null },
        include: ["reasoning.encrypted_content"],
        max_output_tokens: 256,
        temperature: 0.7,
        top_p: 1,
        metadata: { ticket: "T-1" },
        store: false,
        stream: false,
        user: "user-42",
      },
    ],
  },
);
export type ResponsesRequestBody = typeof ResponsesRequest.static;

/** The response object (see compat.md); items are described loosely, their exact shapes are the format's. */
export const ResponseObject = t.Object(
  {
    id: t.String({ description: "resp_…" }),
    object: t.Literal("response"),
    created_at: Int(),
    completed_at: t.Union([Int(), t.Null()]),
    status: t.String({ description: "queued | in_progress | completed | incomplete | failed | cancelled" }),
    model: t.String(),
    output: t.Array(t.Record(t.String(), t.Unknown(), { description: "message (msg_), function_call (fc_), reasoning (rs_) or web_search_call (ws_) item" })),
    output_text: t.Optional(t.String()),
    error: t.Union([t.Object({ code: t.Union([t.String(), t.Null()]), message: t.String() }), t.Null()]),
    incomplete_details: t.Union([t.Object({ reason: t.String() }), t.Null()]),
    service_tier: t.Optional(EchoedTier),
    usage: t.Union([
      t.Object({
        input_tokens: Int(),
        input_tokens_details: t.Object({ cached_tokens: Int() }),
        output_tokens: Int(),
        output_tokens_details: t.Object({ reasoning_tokens: Int() }),
        total_tokens: Int(),
      }),
      t.Null(),
    ]),
  },
  {
    additionalProperties: true,
    examples: [
      {
        id: "resp_6f2c0d…", object: "response", created_at: 1767225600, completed_at: 1767225601, status: "completed", model: "kiln-tiny-v1",
        output: [{ id: "msg_8a1…", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Sunny.", annotations: [] }] }],
        error: null, incomplete_details: null,
        usage: { input_tokens: 31, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 34 },
      },
    ],
  },
);

export const InputTokensObject = t.Object(
  { object: t.Literal("response.input_tokens"), input_tokens: Int() },
  { examples: [{ object: "response.input_tokens", input_tokens: 31 }] },
);

export const DeletedResponse = t.Object(
  { id: t.String(), object: t.Literal("response"), deleted: t.Literal(true) },
  { examples: [{ id: "resp_6f2c0d…", object: "response", deleted: true }] },
);

export const InputItemList = t.Object(
  {
    object: t.Literal("list"),
    data: t.Array(t.Record(t.String(), t.Unknown(), { description: "An input item with its id: message (msg_), function_call (fc_), function_call_output (fco_) or reasoning" })),
    first_id: t.Union([t.String(), t.Null()]),
    last_id: t.Union([t.String(), t.Null()]),
    has_more: t.Boolean(),
  },
  { examples: [{ object: "list", data: [{ id: "msg_8a1…", type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] }], first_id: "msg_8a1…", last_id: "msg_8a1…", has_more: false }] },
);
