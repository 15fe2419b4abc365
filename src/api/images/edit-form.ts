// Reads the multipart form of an image edit: the files `image` (one) or `image[]` (repeated) and `mask`, and the text
// fields, read whole under the request body limit and checked like the JSON form (undeclared fields named).
import { Value } from "@sinclair/typebox/value";
import { ApiError, clip, formatBytes } from "../../errors/api-error.ts";
import { issueToApiError } from "../../errors/validation.ts";
import { boundaryOf } from "../../files/form-headers.ts";
import { MultipartParser } from "../../files/multipart.ts";
import { MAX_FIELD_BYTES } from "../../files/upload.ts";
import { concat, readStream } from "../../http/body-reader.ts";
import type { MediaPart } from "../../inference/conversation.ts";
import { type EditFormBody, EditFormFields } from "./schema.ts";

export interface EditFormLimits {
  /** The whole body (the JSON body limit). */
  maxBodyBytes: number;
  timeoutMs: number;
  /** One image or mask file (the inline media limit). */
  maxFileBytes: number;
  /** Images in all. */
  maxImages: number;
}

export interface EditForm {
  fields: EditFormBody;
  images: MediaPart[];
  mask: MediaPart | null;
}

const FILE_FIELDS = new Set(["image", "image[]", "mask"]);
/** Text fields that carry whole numbers: a form sends them as text. */
const NUMERIC = new Set(["n", "output_compression", "seed"]);

const imagePart = (at: string, bytes: Uint8Array, filename: string | null): MediaPart => ({
  type: "media", declared: "image", source: { kind: "upload", bytes }, at, ...(filename ? { filename } : {}),
});

/** One part, as the parser gave it: its name, file name and bytes. */
interface RawPart {
  name: string;
  filename: string | null;
  bytes: Uint8Array;
}

function parts(body: Uint8Array, boundary: string): RawPart[] {
  const parser = new MultipartParser(boundary);
  const out: RawPart[] = [];
  let current: { name: string; filename: string | null; chunks: Uint8Array[]; size: number } | null = null;
  for (const ev of parser.push(body)) {
    if (ev.type === "part") current = { name: ev.part.name, filename: ev.part.filename, chunks: [], size: 0 };
    else if (ev.type === "data" && current) {
      current.chunks.push(ev.bytes);
      current.size += ev.bytes.byteLength;
    } else if (ev.type === "partEnd" && current) {
      out.push({ name: current.name, filename: current.filename, bytes: concat(current.chunks, current.size) });
      current = null;
    }
  }
  parser.finish();
  return out;
}

/** Reads and checks the form; every refusal is a 400 (413 past the body limit, 408 past the deadline). */
export async function readEditForm(body: ReadableStream<Uint8Array> | null, contentType: string | null, limits: EditFormLimits): Promise<EditForm> {
  const boundary = boundaryOf(contentType);
  if (!body) throw ApiError.badRequest("The edit has no body.");
  const raw = await readStream(body, { maxBytes: limits.maxBodyBytes, timeoutMs: limits.timeoutMs });
  const fields: Record<string, unknown> = {};
  const singles: { at: string; part: RawPart }[] = [];
  const repeated: RawPart[] = [];
  let mask: MediaPart | null = null;
  for (const part of parts(raw, boundary)) {
    const { name } = part;
    if (FILE_FIELDS.has(name)) {
      if (part.bytes.byteLength > limits.maxFileBytes) {
        throw ApiError.badRequest(`The ${name === "mask" ? "mask" : "image"} file '${clip(part.filename ?? name)}' is larger than ${formatBytes(limits.maxFileBytes)}.`, name);
      }
      if (name === "image[]") repeated.push(part);
      else if (name === "image" ? singles.length : mask) throw ApiError.badRequest(`The form field '${name}' is given more than once${name === "image" ? "; send several images as image[]" : ""}.`, name);
      else if (name === "image") singles.push({ at: "image", part });
      else mask = imagePart("mask", part.bytes, part.filename);
      continue;
    }
    if (name in fields) throw ApiError.badRequest(`The form field '${clip(name)}' is given more than once.`, name);
    if (part.bytes.byteLength > MAX_FIELD_BYTES) throw ApiError.badRequest(`The form field '${clip(name)}' is longer than ${formatBytes(MAX_FIELD_BYTES)}.`, name);
    const text = new TextDecoder().decode(part.bytes);
    fields[name] = NUMERIC.has(name) && /^-?\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : text;
  }
  const images = [
    ...singles.map(({ at, part }) => imagePart(at, part.bytes, part.filename)),
    ...repeated.map((part, i) => imagePart(`image[${i}]`, part.bytes, part.filename)),
  ];
  if (!images.length) throw ApiError.badRequest("Missing required parameter: 'image'.", "image");
  if (images.length > limits.maxImages) {
    throw ApiError.badRequest(`The edit carries ${images.length} images; at most ${limits.maxImages} are read per request (KILN_MAX_MEDIA_PER_REQUEST).`, images[limits.maxImages]!.at);
  }
  const issue = Value.Errors(EditFormFields, fields).First();
  if (issue) throw issueToApiError(issue);
  return { fields: fields as EditFormBody, images, mask };
}
