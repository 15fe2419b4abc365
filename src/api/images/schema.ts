// typebox schemas of the Images API (OpenAI-compatible): the generation body, the edit body (JSON, and the same
// fields as a multipart form), the answer. Every field not declared here is a 400 naming it.
import { t } from "elysia";
import { OUTPUT_FORMATS } from "../../images/encode.ts";
import { Int, nullable } from "../schema-helpers.ts";

/** OpenAI's limit on a prompt; a CLIP text encoder reads its first 77 tokens (the answer says what it read). */
export const MAX_PROMPT_CHARS = 32_000;
/** Images per request, as OpenAI's limit. */
export const MAX_IMAGES = 10;

const literals = <const V extends string>(values: readonly V[], error: string) => t.Union(values.map((v) => t.Literal(v)), { error });
/** An optional field that may also be null (the official client sends null for "unset"), refused with its own message. */
const maybe = <T extends Parameters<typeof t.Optional>[0]>(s: T) => nullable(s, (s as { error?: string }).error);

export const QUALITY_VALUES = ["auto", "low", "medium", "high", "standard", "hd"] as const;

/** The fields generations and edits share (the edit's images and mask come apart from these). */
const common = {
  model: t.String({ minLength: 1, description: "An image model's id (GET /v1/models lists each model's capabilities)." }),
  prompt: t.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS, error: `prompt must be a non-empty string of at most ${MAX_PROMPT_CHARS} characters`, description: "What to draw, or how to change the image(s)." }),
  n: maybe(Int({ minimum: 1, maximum: MAX_IMAGES, error: `n must be a whole number from 1 to ${MAX_IMAGES}`, description: `Images to make, 1–${MAX_IMAGES} (default 1).` })),
  size: maybe(t.String({ error: "size must be <width>x<height> (for example 1024x1024) or auto", description: "`<width>x<height>` or `auto`: reduced to the nearest aspect ratio the model supports, at its own pixel budget (the answer's `size` says what was made)." })),
  quality: maybe(literals(QUALITY_VALUES, `quality must be one of ${QUALITY_VALUES.join(", ")}`)),
  response_format: maybe(literals(["b64_json", "url"] as const, "response_format must be b64_json")),
  output_format: maybe(literals(OUTPUT_FORMATS, `output_format must be one of ${OUTPUT_FORMATS.join(", ")}`)),
  output_compression: maybe(Int({ minimum: 0, maximum: 100, error: "output_compression must be a whole number from 0 to 100", description: "jpeg and webp quality, 0–100 (default 100)." })),
  background: maybe(literals(["auto", "opaque", "transparent"] as const, "background must be one of auto, opaque, transparent")),
  user: t.Optional(t.String({ maxLength: 256, description: "Your identifier for the end user (recorded nowhere)." })),
  seed: maybe(Int({ minimum: 0, maximum: 4_294_967_295, error: "seed must be a whole number from 0 to 4294967295", description: "kiln: the noise seed of the first image (the next use seed + 1, …); the same seed and request give the same images." })),
};

export const GenerationRequest = t.Object(common, { additionalProperties: false });
export type GenerationBody = typeof GenerationRequest.static;

/** An image an edit names by reference: a URL (http(s) or a data URL) or an uploaded file; exactly one (the route checks). */
export const ImageReference = t.Object(
  { image_url: t.Optional(t.String({ minLength: 1, error: "image_url must be a non-empty string" })), file_id: t.Optional(t.String({ minLength: 1, error: "file_id must be a non-empty string" })) },
  { additionalProperties: false, error: "each image must be {\"image_url\": …} or {\"file_id\": …}" },
);

const editOnly = {
  input_fidelity: maybe(literals(["high", "low"] as const, "input_fidelity must be high or low")),
};

/** The JSON form of an edit. */
export const EditJsonRequest = t.Object(
  {
    ...common,
    ...editOnly,
    images: t.Array(ImageReference, { minItems: 1, description: "At most KILN_MAX_MEDIA_PER_REQUEST (16) images." }),
    mask: maybe(ImageReference),
  },
  { additionalProperties: false },
);
export type EditJsonBody = typeof EditJsonRequest.static;

/** The text fields of a multipart edit (its files are `image`, `image[]` and `mask`), validated after conversion. */
export const EditFormFields = t.Object({ ...common, ...editOnly }, { additionalProperties: false });
export type EditFormBody = typeof EditFormFields.static;

/** The multipart form of an edit, for the OpenAPI document (the route reads the form itself). */
export const EditForm = t.Object({
  ...common,
  ...editOnly,
  image: t.Array(t.String({ format: "binary" }), { description: "One image as `image`, or several as repeated `image[]` parts, composed into one scene." }),
  mask: t.Optional(t.String({ format: "binary", description: "A PNG the size of the first image whose transparent pixels mark where it may change." })),
});

export const ImageUsage = t.Object({
  input_tokens: t.Integer({ description: "Prompt tokens the text encoder read." }),
  input_tokens_details: t.Object({ text_tokens: t.Integer(), image_tokens: t.Integer({ description: "0: input images are priced per image made, not per token." }) }),
  output_tokens: t.Integer({ description: "0: images are priced per image, not per token." }),
  total_tokens: t.Integer(),
  images: t.Integer({ description: "kiln: images made, each at the model's per-image price." }),
});

export const ImagesResponse = t.Object({
  created: t.Integer(),
  data: t.Array(t.Object({ b64_json: t.String(), revised_prompt: t.Optional(t.String({ description: "The part of the prompt the text encoder read, when it was cut." })) })),
  usage: ImageUsage,
  size: t.String({ description: "The size made, `<width>x<height>`." }),
  quality: t.String(),
  output_format: t.String(),
  background: t.String(),
});
export type ImagesResponseBody = typeof ImagesResponse.static;
