// Reads a fetched body under a byte cap, counting while it streams, so a body larger than the cap is never held.
import { concat } from "../http/body-reader.ts";

/**
 * The body's bytes, at most `maxBytes` of them. Past the cap the stream is cancelled (the connection dropped) and
 * `complete` is false, with the first `maxBytes` bytes kept for a reader that may use a prefix (robots.txt).
 */
export async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<{ bytes: Uint8Array; complete: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), complete: true };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { bytes: concat(chunks, total), complete: true };
    const room = maxBytes - total;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      void reader.cancel().catch(() => {});
      return { bytes: concat(chunks, maxBytes), complete: false };
    }
    chunks.push(value);
    total += value.byteLength;
  }
}
