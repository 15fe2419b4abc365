// Reads a request body under a byte limit and a deadline, cancelling the read the moment either is passed:
// a body is never buffered beyond its route's limit, and a client that stops sending does not hold kiln.
import { ApiError } from "../errors/api-error.ts";

export interface BodyLimits {
  /** Most bytes accepted; one byte more is a 413. */
  maxBytes: number;
  /** Time allowed to receive the whole body, in ms. */
  timeoutMs: number;
}

/** Hands each chunk of `request`'s body to `onChunk` as it arrives (declared length checked first); returns the total. */
export async function pumpBody(request: Request, limits: BodyLimits, onChunk: (chunk: Uint8Array) => void): Promise<number> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limits.maxBytes) throw ApiError.payloadTooLarge(limits.maxBytes);
  if (!request.body) return 0;
  return pumpStream(request.body, limits, onChunk);
}

/** Bytes handled between two turns of the event loop: chunks already buffered would otherwise run back to back. */
const YIELD_EVERY = 256 * 1024;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads `body` chunk by chunk; throws 413 payload_too_large at the first byte past the limit, 408 at the deadline,
 * or whatever `onChunk` throws, cancelling the rest of the stream in each case.
 */
export async function pumpStream(body: ReadableStream<Uint8Array>, limits: BodyLimits, onChunk: (chunk: Uint8Array) => void): Promise<number> {
  const reader = body.getReader();
  let total = 0;
  let sinceYield = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(ApiError.bodyTimeout(limits.timeoutMs)), limits.timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) return total;
      total += value.byteLength;
      if (total > limits.maxBytes) throw ApiError.payloadTooLarge(limits.maxBytes);
      onChunk(value);
      sinceYield += value.byteLength;
      if (sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await nextTurn();
      }
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
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

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
