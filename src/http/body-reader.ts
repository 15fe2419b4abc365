// Reads a request body under a byte limit and a deadline, cancelling the read the moment either is passed:
// a body is never buffered beyond its route's limit, and a client that stops sending does not hold kiln.
import { ApiError } from "../errors/api-error.ts";

export interface BodyLimits {
  /** Most bytes accepted; one byte more is a 413. */
  maxBytes: number;
  /** Time allowed to receive the whole body, in ms. */
  timeoutMs: number;
}

/** Reads `request`'s body (declared length checked first); throws 413 payload_too_large or 408 past the deadline. */
export async function readBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limits.maxBytes) throw ApiError.payloadTooLarge(limits.maxBytes);
  if (!request.body) return new Uint8Array(0);
  return readStream(request.body, limits);
}

export async function readStream(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(ApiError.bodyTimeout(limits.timeoutMs)), limits.timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) throw ApiError.payloadTooLarge(limits.maxBytes);
      chunks.push(value);
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
