// A streaming multipart/form-data parser: chunks in, events out (a part's start, its data, its end, the closing
// boundary). It holds at most a part's header block and a boundary's length of bytes, whatever the size of a part, so
// an upload passes through it in constant memory. Pure: no I/O; the caller decides where data goes.
import { ApiError } from "../errors/api-error.ts";
import { type PartInfo, partInfo } from "./form-headers.ts";

export type MultipartEvent =
  | { type: "part"; part: PartInfo }
  /** Bytes of the current part: a view into the chunk pushed (never written to afterwards), not a copy. */
  | { type: "data"; bytes: Uint8Array }
  | { type: "partEnd" }
  /** The closing boundary: the form is complete (anything after it is ignored). */
  | { type: "done" };

/** Most bytes of one part's header block. */
export const MAX_PART_HEADER_BYTES = 16 * 1024;

const CR = 13;
const DASH = 45;
const HEADER_END = Buffer.from("\r\n\r\n");
const EMPTY = new Uint8Array(0);

type State = "preamble" | "head" | "body" | "done";

const view = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
/** A copy (a Buffer's own slice() would be a view, keeping the whole chunk alive). */
const copy = (b: Uint8Array) => new Uint8Array(b);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

const malformed = (why: string) => ApiError.badRequest(`The multipart/form-data body is malformed: ${why}.`);

export class MultipartParser {
  /** `\r\n--boundary`: what ends every part (the body is read as if it began with `\r\n`, so the first one matches too). */
  private readonly delimiter: Buffer;
  private state: State = "preamble";
  /** Bytes held back from the last push: a possible start of the delimiter, cut by the chunk's end. */
  private carry: Uint8Array = Buffer.from("\r\n");
  /** The header block (and the rest of the boundary line) read so far. */
  private head: Uint8Array = EMPTY;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
  }

  get complete(): boolean {
    return this.state === "done";
  }

  /** Parses one chunk; data events are views into it (or into its copy joined with the held-back bytes). */
  push(chunk: Uint8Array): MultipartEvent[] {
    const events: MultipartEvent[] = [];
    if (this.state === "done") return events;
    const buf = this.carry.byteLength ? concat(this.carry, chunk) : chunk;
    this.carry = EMPTY;
    let at = 0;
    while (at < buf.byteLength && !this.complete) {
      if (this.state === "head") at = this.readHead(buf, at, events);
      else at = this.readUntilDelimiter(buf, at, events);
    }
    return events;
  }

  /** The body ended: a 400 unless the closing boundary was seen. */
  finish(): void {
    if (this.state !== "done") throw malformed("it ended before its closing boundary");
  }

  /** Preamble or part data up to the next delimiter; data is emitted for a part, dropped for the preamble. */
  private readUntilDelimiter(buf: Uint8Array, at: number, events: MultipartEvent[]): number {
    const found = view(buf).indexOf(this.delimiter, at);
    const end = found >= 0 ? found : buf.byteLength - this.partialDelimiterAt(buf, at);
    if (this.state === "body" && end > at) events.push({ type: "data", bytes: buf.subarray(at, end) });
    if (found < 0) {
      // The tail that may begin a delimiter waits for the next chunk (copied: the chunk itself is not kept).
      this.carry = copy(buf.subarray(end));
      return buf.byteLength;
    }
    if (this.state === "body") events.push({ type: "partEnd" });
    this.state = "head";
    return found + this.delimiter.byteLength;
  }

  /** Length of the longest end of buf[at..] that is a start of the delimiter (only its first byte is a CR). */
  private partialDelimiterAt(buf: Uint8Array, at: number): number {
    const from = Math.max(at, buf.byteLength - (this.delimiter.byteLength - 1));
    for (let i = buf.byteLength - 1; i >= from; i--) {
      if (buf[i] !== CR) continue;
      const tail = buf.subarray(i);
      return view(tail).equals(this.delimiter.subarray(0, tail.byteLength)) ? tail.byteLength : 0;
    }
    return 0;
  }

  /** After a delimiter: `--` closes the form; otherwise the rest of the boundary line and the part's headers. */
  private readHead(buf: Uint8Array, at: number, events: MultipartEvent[]): number {
    const before = this.head.byteLength;
    const room = MAX_PART_HEADER_BYTES + HEADER_END.byteLength - before;
    const take = buf.subarray(at, at + room);
    // A block that starts in this chunk is read where it lies; bytes are copied only to hold a block cut by the chunk's
    // end (copying up to the header cap for every part made a form of many tiny parts quadratic in its size).
    const head = before ? concat(this.head, take) : take;
    const hold = () => {
      this.head = before ? head : copy(head);
      return at + take.byteLength;
    };
    if (head[0] === DASH) {
      if (head.byteLength < 2) return hold();
      if (head[1] !== DASH) throw malformed("a boundary is followed by neither a line break nor --");
      this.state = "done";
      this.head = EMPTY;
      events.push({ type: "done" });
      return buf.byteLength;
    }
    const end = view(head).indexOf(HEADER_END, Math.max(0, before - 3));
    if (end < 0) {
      if (head.byteLength >= MAX_PART_HEADER_BYTES + HEADER_END.byteLength) throw malformed(`a part's headers are longer than ${MAX_PART_HEADER_BYTES} bytes`);
      return hold();
    }
    const text = new TextDecoder().decode(head.subarray(0, end));
    const lineEnd = text.indexOf("\r\n");
    // The boundary line may end in spaces or tabs (transport padding), then its line break.
    if (!/^[ \t]*$/.test(lineEnd < 0 ? text : text.slice(0, lineEnd))) throw malformed("a boundary is followed by other text on its line");
    events.push({ type: "part", part: partInfo(lineEnd < 0 ? "" : text.slice(lineEnd + 2)) });
    this.head = EMPTY;
    this.state = "body";
    return at + (end + HEADER_END.byteLength - before);
  }
}
