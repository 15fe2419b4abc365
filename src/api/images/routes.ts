// POST /v1/images/generations (JSON) and POST /v1/images/edits (JSON or multipart/form-data).
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { ApiError } from "../../errors/api-error.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { issueToApiError } from "../../errors/validation.ts";
import { sourceFromUrl } from "../../media/data-url.ts";
import { formBody, parsedBody } from "../../http/edge.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { metaOf } from "../../http/request-meta.ts";
import type { MediaPart } from "../../inference/conversation.ts";
import { readEditForm } from "./edit-form.ts";
import { EditForm, EditJsonRequest, GenerationRequest, ImageReference, ImagesResponse } from "./schema.ts";
import { type EditInput, editImages, generateImages } from "./service.ts";

const errors = { 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 408: ErrorBody, 413: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody, 504: ErrorBody };

/** "images.0.image_url" → "images[0].image_url": how the spec and the rest of this family name an edit's items. */
export function itemParam(param: string): string {
  return param.replace(/^(images)\.(\d+)(?=\.|$)/, "$1[$2]");
}

/**
 * A body checked against its schema here rather than by the router, whose validation would drop the fields the schema
 * does not declare: on the images endpoints each of those is a 400 naming it.
 */
function checked<S extends TSchema>(schema: S, body: unknown): Static<S> {
  const issue = Value.Errors(schema, body).First();
  if (!issue) return body as Static<S>;
  const err = issueToApiError(issue);
  if (!err.param) throw err;
  const param = itemParam(err.param);
  throw ApiError.badRequest(err.message.replace(err.param, param), param);
}

/** An image an edit's JSON names: `{image_url}` (a URL or data URL) or `{file_id}`, named for errors by where it is. */
function referencePart(ref: { image_url?: string; file_id?: string }, at: string): MediaPart {
  if ((ref.image_url === undefined) === (ref.file_id === undefined)) throw ApiError.badRequest(`${at} must have exactly one of image_url and file_id.`, at);
  return ref.image_url !== undefined
    ? { type: "media", declared: "image", source: sourceFromUrl(ref.image_url), at: `${at}.image_url` }
    : { type: "media", declared: "image", source: { kind: "file", fileId: ref.file_id! }, at: `${at}.file_id` };
}

/** The JSON form of an edit (the edge parsed it; the route takes JSON or a form), at most `maxImages` images. */
function jsonEdit(body: unknown, maxImages: number): EditInput {
  // Counted before the schema walks every item: a body of a million references is refused at once.
  const listed = (body as { images?: unknown } | null)?.images;
  if (Array.isArray(listed) && listed.length > maxImages) {
    throw ApiError.badRequest(`The edit carries ${listed.length} images; at most ${maxImages} are read per request (KILN_MAX_MEDIA_PER_REQUEST).`, `images[${maxImages}]`);
  }
  // A mask (a union with null) is checked as the reference it is first, so a fault inside it is named as one in an item is.
  const mask0 = (body as { mask?: unknown } | null)?.mask;
  if (mask0 !== null && typeof mask0 === "object" && !Array.isArray(mask0)) checked(t.Object({ mask: ImageReference }), { mask: mask0 });
  const { images, mask, ...fields } = checked(EditJsonRequest, body);
  return { fields, images: images.map((ref, i) => referencePart(ref, `images[${i}]`)), mask: mask ? referencePart(mask, "mask") : null };
}

export function imagesRoutes(deps: AppDeps) {
  return new Elysia({ name: "images" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post(
      "/v1/images/generations",
      ({ auth, request }) => generateImages(deps, checked(GenerationRequest, parsedBody(request)), { auth, requestId: metaOf(request).id, signal: request.signal }),
      {
        edge: POLICY.keyedJson,
        response: { 200: ImagesResponse, ...errors },
        detail: {
          requestBody: { required: true, content: { "application/json": { schema: GenerationRequest as object } } },
          summary: "Generate images",
          description:
            "OpenAI-compatible text-to-image on an image model. `size` is reduced to the nearest aspect ratio the model supports at its own " +
            "pixel budget; `quality` picks the denoising steps. Fields the endpoint does not declare are a 400 naming them.",
          tags: ["Images"],
        },
      },
    )
    .post(
      "/v1/images/edits",
      async ({ auth, request }) => {
        const form = formBody(request);
        const limits = deps.config;
        const input = form
          ? await readEditForm(form.stream, request.headers.get("content-type"), {
              maxBodyBytes: limits.maxBodyBytes, timeoutMs: limits.bodyTimeoutMs, maxFileBytes: limits.maxInlineMediaBytes, maxImages: limits.maxMediaPerRequest,
            })
          : jsonEdit(parsedBody(request), limits.maxMediaPerRequest);
        return editImages(deps, input, { auth, requestId: metaOf(request).id, signal: request.signal });
      },
      {
        edge: POLICY.keyedJsonOrForm,
        response: { 200: ImagesResponse, ...errors },
        detail: {
          summary: "Edit images",
          description:
            "OpenAI-compatible image edit: multipart/form-data with `image` (or repeated `image[]`), an optional `mask` and the fields, or JSON " +
            "with `images: [{image_url} | {file_id}]`. Several images are composed into one scene on a canvas of the target aspect ratio; a " +
            "mask (transparent = may change) applies to the first image, and every pixel outside it is kept exactly.",
          requestBody: {
            required: true,
            // typebox schemas are JSON Schema; the OpenAPI types cannot see that through their unions.
            content: { "multipart/form-data": { schema: EditForm as object }, "application/json": { schema: EditJsonRequest as object } },
          },
          tags: ["Images"],
        },
      },
    );
}
