// Receives a multipart/form-data upload without buffering its file: the file part streams into the storage as it
// arrives, the other fields (before or after it) are read into memory under a small cap, and the storage sees the
// end of the file only once the whole form has arrived and passed `check`, so a refused form leaves nothing stored.
import { ApiError, clip, formatBytes } from "../errors/api-error.ts";
import { declaredLength, LimitedReader } from "../http/body-reader.ts";
import { boundaryOf, type PartInfo } from "./form-headers.ts";
import { MAX_PART_HEADER_BYTES, type MultipartEvent, MultipartParser } from "./multipart.ts";

/** Most bytes of one text field (purpose is a word). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Most parts in one form. */
export const MAX_PARTS = 16;
/** What a form may carry beside its file: every text field at its cap, and every part's headers. */
export const FORM_OVERHEAD_BYTES = MAX_PARTS * (MAX_FIELD_BYTES + MAX_PART_HEADER_BYTES + 256);

export interface UploadLimits {
  /** Most bytes of the file; one more is a 400. */
  maxFileBytes: number;
  /** Time allowed for the whole body. */
  timeoutMs: number;
  /** Aborted when the upload must stop while its body still arrives (a drain): the abort's reason is the answer. */
  stop?: AbortSignal;
}

export interface ReceivedUpload {
  /** The text fields, by name. */
  fields: Map<string, string>;
  file: PartInfo;
  bytes: number;
}

/** The 400 for a file past the size limit, naming the limit. */
function fileTooLarge(maxBytes: number): ApiError {
  return ApiError.badRequest(`The file is larger than the size limit of ${formatBytes(maxBytes)}.`, "file");
}

/**
 * Refuses an upload whose headers declare a body longer than the file limit plus the form's overhead, before any
 * byte of it is read (a chunked one is cut off while read instead).
 */
export function refuseDeclaredOversize(headers: Headers, maxFileBytes: number): void {
  if ((declaredLength(headers) ?? 0) > maxFileBytes + FORM_OVERHEAD_BYTES) throw fileTooLarge(maxFileBytes);
}

/** Multipart events pulled from the body as they are needed: nothing is read ahead of the consumer. */
class FormEvents {
  private queue: MultipartEvent[] = [];
  private at = 0;

  constructor(private readonly source: LimitedReader, private readonly parser: MultipartParser) {}

  async next(): Promise<MultipartEvent> {
    while (this.at === this.queue.length) {
      const chunk = await this.source.read().catch((e: unknown) => {
        // The connection closed mid-body: the client's doing (it is gone and sees nothing), not a server fault.
        throw e instanceof ApiError ? e : ApiError.badRequest("The upload was cut off before the end of its body.");
      });
      if (!chunk) {
        this.parser.finish();
        return { type: "done" };
      }
      this.queue = this.parser.push(chunk);
      this.at = 0;
    }
    return this.queue[this.at++]!;
  }

  cancel(): void {
    this.source.cancel();
  }
}

/** Reads parts up to the file part (returned) or the end of the form (null), keeping the text fields. */
async function fieldsUntilFile(form: FormEvents, fields: Map<string, string>, fileField: string, parts: { n: number }): Promise<PartInfo | null> {
  for (;;) {
    const ev = await form.next();
    if (ev.type === "done") return null;
    if (ev.type !== "part") continue;
    if (++parts.n > MAX_PARTS) throw ApiError.badRequest(`The form has more than ${MAX_PARTS} parts.`);
    if (ev.part.name === fileField) return ev.part;
    if (fields.has(ev.part.name)) throw ApiError.badRequest(`The form field '${clip(ev.part.name)}' is given more than once.`, ev.part.name);
    fields.set(ev.part.name, await fieldText(form, ev.part.name));
  }
}

async function fieldText(form: FormEvents, name: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let ev = await form.next(); ev.type === "data"; ev = await form.next()) {
    size += ev.bytes.byteLength;
    if (size > MAX_FIELD_BYTES) throw ApiError.badRequest(`The form field '${clip(name)}' is longer than ${formatBytes(MAX_FIELD_BYTES)}.`, name);
    chunks.push(ev.bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads the form in `body` (its `contentType` names the boundary). The part named `fileField` is handed to `store`
 * as a stream, which ends only after the rest of the form is read and `check(fields, true)` passed; a failure
 * anywhere errors that stream instead, so the storage discards what it wrote. `check(fields, false)` runs when the
 * file part starts, so a bad field sent before the file is refused before the file is read. A form without a file
 * part, or whose file field is a text field, is a 400 (after `check`, so a form missing both says what `check` says).
 */
export async function receiveUpload(
  body: ReadableStream<Uint8Array> | null,
  contentType: string | null,
  opts: UploadLimits & { fileField: string },
  store: (file: ReadableStream<Uint8Array>) => Promise<number>,
  check: (fields: Map<string, string>, complete: boolean) => void,
): Promise<ReceivedUpload> {
  const boundary = boundaryOf(contentType);
  if (!body) throw ApiError.badRequest("The upload has no body.");
  const form = new FormEvents(new LimitedReader(body, { maxBytes: opts.maxFileBytes + FORM_OVERHEAD_BYTES, timeoutMs: opts.timeoutMs }, opts.stop), new MultipartParser(boundary));
  const fields = new Map<string, string>();
  const parts = { n: 0 };
  try {
    const file = await fieldsUntilFile(form, fields, opts.fileField, parts);
    if (!file) {
      check(fields, true);
      throw ApiError.badRequest(`The form has no ${opts.fileField} field.`, opts.fileField);
    }
    check(fields, false);
    // A plain text field (no filename, no content type) is not a file: storing its text as one hides the client's mistake.
    if (file.filename === null && file.contentType === null) {
      throw ApiError.badRequest(`The form's ${opts.fileField} field is a text field; send the file as a file part (with a filename).`, opts.fileField);
    }
    let size = 0;
    let fileDone = false;
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            while (!fileDone) {
              const ev = await form.next();
              if (ev.type === "data") {
                size += ev.bytes.byteLength;
                if (size > opts.maxFileBytes) throw fileTooLarge(opts.maxFileBytes);
                return controller.enqueue(ev.bytes);
              }
              // The parser ends a part (partEnd) before anything else can follow its data.
              fileDone = true;
            }
            if (await fieldsUntilFile(form, fields, opts.fileField, parts)) throw ApiError.badRequest(`The form has more than one ${opts.fileField} field.`, opts.fileField);
            check(fields, true);
            controller.close();
          } catch (e) {
            controller.error(e);
          }
        },
        cancel: () => form.cancel(),
      },
      // Strict back-pressure: a chunk is read from the network only when the storage asks for one.
      { highWaterMark: 0 },
    );
    const bytes = await store(stream);
    return { fields, file, bytes };
  } finally {
    // Success too: the parser stops at the closing boundary, so the body is never read to its end, and the reader
    // (its deadline's timer, the body) would otherwise stay alive for the whole upload timeout.
    form.cancel();
  }
}
