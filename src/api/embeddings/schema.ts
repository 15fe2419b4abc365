// typebox schemas of POST /v1/embeddings (request and response), OpenAI's Embeddings format.
import { t } from "elysia";
import { Int, nullable } from "../schema-helpers.ts";
import { MAX_INPUTS } from "./validate.ts";

const INPUT_ERROR = "input must be a string, an array of strings, an array of token ids, or an array of arrays of token ids";
// Each member carries the message too: typebox reports the first member's failure inside an array, which alone misleads.
const TokenIds = t.Array(Int({ minimum: 0, error: INPUT_ERROR }), { error: INPUT_ERROR });

export const EmbeddingRequest = t.Object(
  {
    model: t.String({ minLength: 1, description: "A model id from GET /v1/models (one whose capabilities.embeddings is true)." }),
    input: t.Union([t.String(), t.Array(t.String({ error: INPUT_ERROR }), { error: INPUT_ERROR }), TokenIds, t.Array(TokenIds, { error: INPUT_ERROR })], {
      error: INPUT_ERROR,
      description: `One input or an array of up to ${MAX_INPUTS}; each no longer than the model's context_length in tokens, none empty.`,
    }),
    encoding_format: nullable(t.Union([t.Literal("float"), t.Literal("base64")]), "encoding_format must be float or base64"),
    dimensions: nullable(
      Int({ minimum: 1, description: "Truncates each vector to this size and scales it back to unit length: only models trained for it (their sizes in GET /v1/models)." }),
      "dimensions must be a whole number of at least 1",
    ),
    user: t.Optional(t.String()),
  },
  { additionalProperties: true },
);
export type EmbeddingRequestBody = typeof EmbeddingRequest.static;

export const EmbeddingList = t.Object({
  object: t.Literal("list"),
  data: t.Array(
    t.Object({
      object: t.Literal("embedding"),
      index: Int(),
      embedding: t.Union([t.Array(t.Number()), t.String({ description: "base64 of the little-endian float32 values" })]),
    }),
  ),
  model: t.String(),
  usage: t.Object({ prompt_tokens: Int(), total_tokens: Int() }),
});
export type EmbeddingListBody = typeof EmbeddingList.static;
