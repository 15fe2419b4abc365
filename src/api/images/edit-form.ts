// Reads the multipart form of an image edit: the files `image` (one) or `image[]` (repeated) and `mask`, and the text
// fields, parsed as the body arrives under the request body limit and a cap on its parts, and checked like the JSON
// form (undeclared fields named, as soon as their part starts).
import { Value } from "@sinclair/typebox/value";
import { ApiError, clip, formatBytes } from "../../errors/api-error.ts";
import { issueToApiError } from "../../errors/validation.ts";
import { boundaryOf } from "../../files/form-headers.ts";
import { type MultipartEvent, MultipartParser } from "../../files/multipart.ts";
import { MAX_FIELD_BYTES } from "../../files/upload.ts";
import { concat, pumpStream } from "../../http/body-reader.ts";
import type { MediaPart } from "../../inference/conversation.ts";
import { type EditFormBody, EditFormFields, MAX_PROMPT_CHARS } from "./schema.ts";

export interface EditFormLimits {
  /** The whole body (the JSON body limit). */
  maxBodyBytes: number;
  timeoutMs: number;
  /** One image or mask file (the inline media limit). */
  maxFileBytes: number;
  /** Images in all (the mask aside). */
  maxImages: number;
}

export interface EditForm {
  fields: EditFormBody;
  images: MediaPart[];
  mask: MediaPart | null;
}

const FILE_FIELDS = new Set(["image", "image[]", "mask"]);
const TEXT_FIELDS = new Set(Object.keys(EditFormFields.properties));
/** Text fields that carry whole numbers: a form sends them as text. */
const NUMERIC = new Set(["n", "output_compression", "seed"]);
/** The prompt's cap in UTF-8 bytes: its character limit at four bytes each; other fields keep the upload cap. */
const PROMPT_BYTES = 4 * MAX_PROMPT_CHARS;

const imagePart = (at: string, bytes: Uint8Array, filename: string | null): MediaPart => ({
  type: "media", declared: "image", source: { kind: "upload", bytes }, at, ...(filename ? { filename } : {}),
});

/** One part, as the parser gave it: its name, file name and bytes. */
interface RawPart {
  name: string;
  /** What errors call it: the field's name, or `image[i]` for the i-th `image[]` part. */
  at: string;
  filename: string | null;
  bytes: Uint8Array;
}

/**
 * Collects the form's parts from the parser's events. Every refusal it can make from a part's name or size it makes
 * while the body arrives: a form of a million tiny parts stops at the first part past the cap, not after all of it.
 */
class PartCollector {
  readonly parts: RawPart[] = [];
  private readonly seen = new Set<string>();
  private current: { name: string; at: string; filename: string | null; chunks: Uint8Array[]; size: number; cap: number } | null = null;
  private images = 0;
  /** `image[]` parts so far: they are named image[0], image[1]… whether an `image` part came too. */
  private repeated = 0;

  constructor(private readonly limits: EditFormLimits) {}

  take(events: MultipartEvent[]): void {
    for (const ev of events) {
      if (ev.type === "part") this.start(ev.part.name, ev.part.filename);
      else if (ev.type === "data" && this.current) {
        const c = this.current;
        c.size += ev.bytes.byteLength;
        if (c.size > c.cap) throw tooLarge(c.name, c.filename, c.cap);
        c.chunks.push(ev.bytes);
      } else if (ev.type === "partEnd" && this.current) {
        const c = this.current;
        this.parts.push({ name: c.name, at: c.at, filename: c.filename, bytes: concat(c.chunks, c.size) });
        this.current = null;
      }
    }
  }

  private start(name: string, filename: string | null): void {
    if (!FILE_FIELDS.has(name) && !TEXT_FIELDS.has(name)) throw ApiError.badRequest(`Unrecognized request argument supplied: ${clip(name)}`, clip(name, 128));
    if (name !== "image[]") {
      if (this.seen.has(name)) throw ApiError.badRequest(`The form field '${name}' is given more than once${name === "image" ? "; send several images as image[]" : ""}.`, name);
      this.seen.add(name);
    }
    const at = name === "image[]" ? `image[${this.repeated++}]` : name;
    if (name === "image[]" || name === "image") {
      if (++this.images > this.limits.maxImages) {
        throw ApiError.badRequest(`The edit carries more than ${this.limits.maxImages} images; at most ${this.limits.maxImages} are read per request (KILN_MAX_MEDIA_PER_REQUEST).`, at);
      }
    }
    const cap = FILE_FIELDS.has(name) ? this.limits.maxFileBytes : name === "prompt" ? PROMPT_BYTES : MAX_FIELD_BYTES;
    this.current = { name, at, filename, chunks: [], size: 0, cap };
  }
}

function tooLarge(name: string, filename: string | null, cap: number): ApiError {
  if (FILE_FIELDS.has(name)) return ApiError.badRequest(`The ${name === "mask" ? "mask" : "image"} file '${clip(filename ?? name)}' is larger than ${formatBytes(cap)}.`, name);
  return ApiError.badRequest(`The form field '${name}' is longer than ${formatBytes(cap)}.`, name);
}

/** Reads and checks the form; every refusal is a 400 (413 past the body limit, 408 past the deadline). */
export async function readEditForm(body: ReadableStream<Uint8Array> | null, contentType: string | null, limits: EditFormLimits): Promise<EditForm> {
  const boundary = boundaryOf(contentType);
  if (!body) throw ApiError.badRequest("The edit has no body.");
  const parser = new MultipartParser(boundary);
  const collector = new PartCollector(limits);
  await pumpStream(body, { maxBytes: limits.maxBodyBytes, timeoutMs: limits.timeoutMs }, (chunk) => collector.take(parser.push(chunk)));
  parser.finish();
  const fields: Record<string, unknown> = {};
  const images: MediaPart[] = [];
  let mask: MediaPart | null = null;
  for (const part of collector.parts) {
    // A single `image` goes first, whatever its place in the form; `image[]` parts follow in their order.
    if (part.name === "image") images.unshift(imagePart(part.at, part.bytes, part.filename));
    else if (part.name === "image[]") images.push(imagePart(part.at, part.bytes, part.filename));
    else if (part.name === "mask") mask = imagePart(part.at, part.bytes, part.filename);
    else {
      const text = new TextDecoder().decode(part.bytes);
      fields[part.name] = NUMERIC.has(part.name) && /^-?\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : text;
    }
  }
  if (!images.length) throw ApiError.badRequest("Missing required parameter: 'image'.", "image");
  const issue = Value.Errors(EditFormFields, fields).First();
  if (issue) throw issueToApiError(issue);
  return { fields: fields as EditFormBody, images, mask };
}
