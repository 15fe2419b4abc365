// typebox schemas of the Models endpoints (OpenAI list/object shape plus kiln's own fields).
import { t } from "elysia";

export const ModelObject = t.Object({
  id: t.String({ description: "Lowercase, hyphenated, with a version number." }),
  object: t.Literal("model"),
  created: t.Integer({ description: "Unix seconds." }),
  owned_by: t.String(),
  display_name: t.String(),
  context_length: t.Integer(),
  capabilities: t.Object({
    chat: t.Boolean(),
    completions: t.Boolean({ description: "Takes POST /v1/completions (the prompt continued as written, no chat template)." }),
    tools: t.Boolean(),
    reasoning: t.Boolean(),
    vision: t.Boolean(),
    audio: t.Boolean(),
    image_generation: t.Boolean(),
    embeddings: t.Boolean({ description: "Takes POST /v1/embeddings (an embedding model; it takes no chat or completions)." }),
  }),
  pricing: t.Object({
    input_per_million: t.Number(),
    cached_input_per_million: t.Number({ description: "Price of prompt tokens read from the prefix cache (kiln.json's cached_input_per_million; default: input_per_million)." }),
    output_per_million: t.Number(),
    per_image: t.Union([t.Number(), t.Null()]),
  }),
  media: t.Optional(
    t.Object(
      {
        image: t.Optional(t.Object({ size: t.Integer({ description: "Side of the square the vision encoder sees (pixels)." }), patch_size: t.Integer(), tokens_per_image: t.Integer() })),
        audio: t.Optional(t.Object({ sample_rate: t.Integer(), tokens_per_second: t.Number({ description: "Prompt tokens one second of audio takes, about." }) })),
      },
      { description: "How media input enters this model's prompt; absent for text-only models." },
    ),
  ),
  images: t.Optional(
    t.Object(
      {
        resolution: t.Integer({ description: "Native side in pixels: every size keeps about resolution² pixels." }),
        sizes: t.Record(t.String(), t.String(), { description: "The size each supported aspect ratio is made at (`\"16:9\": \"176x96\"`); a request's size is reduced to the nearest ratio." }),
        steps: t.Object({ low: t.Integer(), medium: t.Integer(), high: t.Integer() }, { description: "Denoising steps per quality (auto and standard are medium, hd is high)." }),
        edits: t.Boolean({ description: "Whether the model edits images (it has a VAE encoder)." }),
      },
      { description: "How an image model renders; absent for other models." },
    ),
  ),
  embedding: t.Optional(
    t.Object(
      {
        dimensions: t.Integer({ description: "The size of each vector." }),
        dimensions_allowed: t.Array(t.Integer(), { description: "Sizes `dimensions` may ask for: the trained sizes up to the full one (any size in between is cut the same way)." }),
        pooling: t.Union([t.Literal("mean"), t.Literal("cls"), t.Literal("lasttoken")]),
        normalized: t.Boolean({ description: "Whether vectors have unit length." }),
      },
      { description: "How an embedding model makes its vectors; absent for other models." },
    ),
  ),
  status: t.Union([t.Literal("operational"), t.Literal("degraded"), t.Literal("outage")]),
  device: t.Optional(t.Union([t.Literal("cpu"), t.Literal("webgpu")], { description: "Where the model's workers run it (KILN_DEVICE or the model's kiln.json, chosen at start)." })),
  weights: t.Optional(t.String({ description: "The weight format served: fp32, int8, q4 on the CPU; fp16, q4f16 on the GPU." })),
});

export const ModelList = t.Object({ object: t.Literal("list"), data: t.Array(ModelObject) });

export const ModelParams = t.Object({ model: t.String() });
