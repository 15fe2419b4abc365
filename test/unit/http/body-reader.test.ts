import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors/api-error.ts";
import { LimitedReader, readBody, readStream } from "../../../src/http/body-reader.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";

const MiB = 1024 * 1024;

/** A stream of `count` chunks of `size` bytes that records how many were pulled and whether it was cancelled. */
function source(count: number, size: number, gapMs = 0) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (state.pulled === count) return c.close();
      if (gapMs) await Bun.sleep(gapMs);
      state.pulled++;
      c.enqueue(new Uint8Array(size).fill(0x61));
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}


describe("readStream", () => {
  test("returns the whole body under the limit", async () => {
    const { stream } = source(3, 1000);
    expect((await readStream(stream, { maxBytes: 3000, timeoutMs: 1000 })).byteLength).toBe(3000);
  });

  test("stops at the first chunk past the limit and cancels the rest (a 512 MiB body is never read)", async () => {
    const { stream, state } = source(512, MiB);
    const e = await apiRefusal(readStream(stream, { maxBytes: 4 * MiB, timeoutMs: 5000 }));
    expect(e.status).toBe(413);
    expect(e.code).toBe("payload_too_large");
    expect(e.type).toBe("invalid_request_error");
    expect(e.message).toBe("The request body is larger than this endpoint's limit of 4 MiB.");
    expect(state.pulled).toBe(5);
    expect(state.cancelled).toBe(true);
  });

  test("a body that stops arriving gets 408 at the deadline", async () => {
    const { stream, state } = source(100, 10, 40);
    const t0 = performance.now();
    const e = await apiRefusal(readStream(stream, { maxBytes: MiB, timeoutMs: 150 }));
    expect(e.status).toBe(408);
    expect(performance.now() - t0).toBeLessThan(400);
    expect(state.cancelled).toBe(true);
  });
});

test("a body that is already buffered still lets the event loop turn while it is read", async () => {
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 64; i++) c.enqueue(new Uint8Array(64 * 1024));
      c.close();
    },
  });
  let turned = false;
  setImmediate(() => (turned = true));
  expect((await readStream(stream, { maxBytes: 8 * MiB, timeoutMs: 5000 })).byteLength).toBe(4 * MiB);
  expect(turned).toBe(true);
});

describe("readBody", () => {
  test("a declared Content-Length over the limit is refused before reading", async () => {
    const { stream, state } = source(10, MiB);
    const req = new Request("http://localhost/x", { method: "POST", body: stream, headers: { "content-length": String(10 * MiB) } });
    expect((await apiRefusal(readBody(req, { maxBytes: MiB, timeoutMs: 1000 }))).status).toBe(413);
    expect(state.pulled).toBe(0);
  });

  test("no body is an empty body", async () => {
    expect((await readBody(new Request("http://localhost/x", { method: "POST" }), { maxBytes: 10, timeoutMs: 100 })).byteLength).toBe(0);
  });
});

describe("LimitedReader", () => {
  test("chunks it has handed out are not kept reachable while the body is still being read", async () => {
    const { stream } = source(64, 64 * 1024);
    const reader = new LimitedReader(stream, { maxBytes: 8 * MiB, timeoutMs: 60_000 });
    const seen: WeakRef<Uint8Array>[] = [];
    for (let i = 0; i < 64; i++) seen.push(new WeakRef((await reader.read())!));
    // The body is not over (its end not read yet): only the reader could still hold the chunks.
    await Bun.sleep(0);
    Bun.gc(true);
    await Bun.sleep(0);
    Bun.gc(true);
    expect(seen.filter((r) => r.deref() !== undefined).length).toBeLessThan(8);
    expect(await reader.read()).toBeNull();
  });

  test("the deadline ends a read that is waiting, with a 408", async () => {
    const stalled = new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) }, { highWaterMark: 0 });
    const reader = new LimitedReader(stalled, { maxBytes: MiB, timeoutMs: 100 });
    const e = await apiRefusal(reader.read());
    expect([e.status, e.message]).toEqual([408, "The request body was not received within 0.1 s."]);
  });

  test("aborting `stop` ends a read that is waiting with the abort's reason; after the body's end it changes nothing", async () => {
    const stalled = new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) }, { highWaterMark: 0 });
    const stop = new AbortController();
    const reader = new LimitedReader(stalled, { maxBytes: MiB, timeoutMs: 60_000 }, stop.signal);
    const pending = apiRefusal(reader.read());
    stop.abort(ApiError.shuttingDown());
    expect((await pending).code).toBe("server_shutting_down");

    const late = new AbortController();
    const whole = new LimitedReader(source(1, 16).stream, { maxBytes: MiB, timeoutMs: 60_000 }, late.signal);
    expect((await whole.read())!.byteLength).toBe(16);
    expect(await whole.read()).toBeNull();
    late.abort(ApiError.shuttingDown());
    expect(await whole.read()).toBeNull();
  });
});
