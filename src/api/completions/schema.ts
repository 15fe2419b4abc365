// typebox schemas of POST /v1/completions (request, response and stream chunk), OpenAI's legacy Completions format.
import { t } from "elysia";
import { SAMPLER_PROPERTIES } from "../sampler-fields.ts";
import { completionHead, Int, nullable } from "../schema-helpers.ts";

const PROMPT_ERROR = "prompt must be a string, an array of strings, an array of token ids, or an array of arrays of token ids";
// Each member carries the message too: typebox reports the first member's failure inside an array, which alone misleads.
const TokenIds = t.Array(Int({ minimum: 0, error: PROMPT_ERROR }), { minItems: 1, error: PROMPT_ERROR });

export const CompletionRequest = t.Object(
  {
    model: t.String({ minLength: 1, description: "A model id from GET /v1/models (one whose capabilities.completions is true)." }),
    prompt: t.Union([t.String(), t.Array(t.String({ error: PROMPT_ERROR }), { minItems: 1, error: PROMPT_ERROR }), TokenIds, t.Array(TokenIds, { minItems: 1, error: PROMPT_ERROR })], {
      error: PROMPT_ERROR,
      description: "Continued as written, without the chat template. An array of prompts gets n choices each, indexed prompt by prompt.",
    }),
    suffix: nullable(t.String({ description: "Refused: no built-in model has a fill-in-the-middle template." })),
    max_tokens: nullable(Int({ minimum: 0, description: "Default 16, as the format's. 0 only with echo: the prompt alone comes back (with its logprobs if asked)." }), "max_tokens must be a whole number of at least 0"),
    temperature: nullable(t.Number({ minimum: 0, maximum: 2 }), "temperature must be a number between 0 and 2"),
    top_p: nullable(t.Number({ exclusiveMinimum: 0, maximum: 1 }), "top_p must be greater than 0 and at most 1"),
    n: nullable(Int({ minimum: 1, maximum: 16 }), "n must be a whole number from 1 to 16"),
    best_of: nullable(Int({ minimum: 1, description: "Accepted only equal to n: kiln returns every candidate it generates." }), "best_of must be a whole number of at least 1"),
    stream: nullable(t.Boolean(), "stream must be true or false"),
    stream_options: nullable(t.Object({ include_usage: t.Optional(t.Boolean()) })),
    logprobs: nullable(Int({ minimum: 0, maximum: 5, description: "The generated tokens' log probabilities, with this many alternatives each (and the prompt's, with echo)." }), "logprobs must be a whole number from 0 to 5"),
    echo: nullable(t.Boolean({ description: "Prepend the prompt to each choice's text; with logprobs, its tokens' log probabilities come first (the first token's null). Not on models placed on a GPU." })),
    stop: nullable(t.Union([t.String(), t.Array(t.String({ minLength: 1 }), { maxItems: 4 })]), "stop must be a string or an array of up to 4 strings"),
    seed: nullable(Int(), "seed must be a whole number"),
    ...SAMPLER_PROPERTIES,
    user: t.Optional(t.String()),
  },
  { additionalProperties: true },
);
export type CompletionRequestBody = typeof CompletionRequest.static;

const Logprobs = t.Object(
  {
    tokens: t.Array(t.String()),
    token_logprobs: t.Array(t.Union([t.Number(), t.Null()]), { description: "null for the first prompt token (echo): nothing precedes it" }),
    top_logprobs: t.Array(t.Union([t.Record(t.String(), t.Number()), t.Null()])),
    text_offset: t.Array(Int({ description: "where the token's text starts in the choice's text (UTF-16 units)" })),
  },
  { description: "present when the request set logprobs: each token's log probability under the model (the prompt's first, with echo), and its most likely alternatives" },
);

export const Usage = t.Object({
  prompt_tokens: Int(),
  completion_tokens: Int(),
  total_tokens: Int(),
  prompt_tokens_details: t.Object({ cached_tokens: Int({ description: "of prompt_tokens, those read from the prefix cache (0 on a miss, and always 0 for a prompt scored by echo with logprobs)" }) }),
});

export const CompletionChoice = t.Object({
  index: Int(),
  text: t.String(),
  logprobs: t.Union([Logprobs, t.Null()]),
  finish_reason: t.Union([t.Literal("stop"), t.Literal("length"), t.Null()]),
});

export const Completion = t.Object({
  ...completionHead("cmpl-", "text_completion"),
  choices: t.Array(CompletionChoice),
  usage: Usage,
});
export type CompletionBody = typeof Completion.static;
export type CompletionLogprobs = typeof Logprobs.static;
