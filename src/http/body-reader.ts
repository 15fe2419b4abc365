// Reads a request body under a byte limit and a deadline, cancelling the read the moment either is passed:
// a body is never buffered beyond its route's limit, and a client that stops sending does not hold kiln.
import { ApiError } from "../errors/api-error.ts";

export interface BodyLimits {
  /** Most bytes accepted; one byte more is a 413. */
  maxBytes: number;
  /** Time allowed to receive the whole body, in ms. */
  timeoutMs: number;
}

/** The body length the headers declare; null when they declare none (chunked) or none that is a number. */
export function declaredLength(headers: Headers): number | null {
  const declared = headers.get("content-length");
  return declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
}

/** Hands each chunk of `request`'s body to `onChunk` as it arrives (declared length checked first); returns the total. */
export async function pumpBody(request: Request, limits: BodyLimits, onChunk: (chunk: Uint8Array) => void): Promise<number> {
  if ((declaredLength(request.headers) ?? 0) > limits.maxBytes) throw ApiError.payloadTooLarge(limits.maxBytes);
  if (!request.body) return 0;
  return pumpStream(request.body, limits, onChunk);
}

/** Bytes handled between two turns of the event loop: chunks already buffered would otherwise run back to back. */
const YIELD_EVERY = 256 * 1024;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const readerOf = (body: ReadableStream<Uint8Array>) => body.getReader();
/** A stream's default reader, as getReader() types it (Bun's and Node's declarations of the name differ). */
export type StreamReader = ReturnType<typeof readerOf>;

/**
 * A body read one chunk at a time, for a consumer that sets its own pace (an upload written to disk): `read()` throws
 * 413 payload_too_large at the first byte past the limit and 408 at the deadline, cancelling the rest of the stream;
 * `cancel()` ends it early (whatever else went wrong).
 */
export class LimitedReader {
  private readonly reader: StreamReader;
  private readonly timer: ReturnType<typeof setTimeout>;
  private timedOut = false;
  /** What `stop` was aborted with, once it was. */
  private stoppedBy: unknown = null;
  private readonly onStop = () => {
    this.stoppedBy = this.stop!.reason;
    this.reader.cancel().catch(() => {});
  };
  /** Bytes read so far. */
  total = 0;

  /** `stop`: aborting it ends the read at once, and `read()` throws the abort's reason (a drain's 503). */
  constructor(body: ReadableStream<Uint8Array>, private readonly limits: BodyLimits, private readonly stop?: AbortSignal) {
    this.reader = readerOf(body);
    // The deadline cancels the stream, which ends a pending read at once. (Racing each read against one long-lived
    // deadline promise instead would keep every chunk read reachable from that promise until the body ends.)
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.reader.cancel().catch(() => {});
    }, limits.timeoutMs);
    if (stop?.aborted) this.onStop();
    else stop?.addEventListener("abort", this.onStop, { once: true });
  }

  /** The next chunk, or null at the end of the body. */
  async read(): Promise<Uint8Array | null> {
    try {
      const { done, value } = await this.reader.read();
      if (this.stoppedBy !== null) throw this.stoppedBy;
      if (this.timedOut) throw ApiError.bodyTimeout(this.limits.timeoutMs);
      if (done) {
        this.settle();
        return null;
      }
      this.total += value.byteLength;
      if (this.total > this.limits.maxBytes) throw ApiError.payloadTooLarge(this.limits.maxBytes);
      return value;
    } catch (e) {
      this.cancel();
      if (this.stoppedBy !== null) throw this.stoppedBy;
      throw this.timedOut ? ApiError.bodyTimeout(this.limits.timeoutMs) : e;
    }
  }

  cancel(): void {
    this.settle();
    this.reader.cancel().catch(() => {});
  }

  /** The body is over: neither the deadline nor `stop` can end it any more. */
  private settle(): void {
    clearTimeout(this.timer);
    this.stop?.removeEventListener("abort", this.onStop);
  }
}

/**
 * Reads `body` chunk by chunk; throws 413 payload_too_large at the first byte past the limit, 408 at the deadline,
 * or whatever `onChunk` throws, cancelling the rest of the stream in each case.
 */
export async function pumpStream(body: ReadableStream<Uint8Array>, limits: BodyLimits, onChunk: (chunk: Uint8Array) => void): Promise<number> {
  const reader = new LimitedReader(body, limits);
  let sinceYield = 0;
  try {
    for (let chunk = await reader.read(); chunk; chunk = await reader.read()) {
      onChunk(chunk);
      sinceYield += chunk.byteLength;
      if (sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await nextTurn();
      }
    }
    return reader.total;
  } catch (e) {
    reader.cancel();
    throw e;
  }
}

/** The whole body of `request` under `limits`, as one buffer. */
export async function readBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const total = await pumpBody(request, limits, (c) => chunks.push(c));
  return concat(chunks, total);
}

export async function readStream(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const total = await pumpStream(body, limits, (c) => chunks.push(c));
  return concat(chunks, total);
}

/** The chunks joined into one array of `total` bytes (their summed length); a lone chunk is returned as it is. */
export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
