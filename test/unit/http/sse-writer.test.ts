import { describe, expect, test } from "bun:test";
import { encodeFrame, type SseFrame, sseResponse, type StreamEnd } from "../../../src/http/sse-writer.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const crashFrame = (): SseFrame => ({ data: JSON.stringify({ error: { message: "internal" } }) });

async function readAll(res: Response): Promise<string> {
  return await res.text();
}

describe("encodeFrame", () => {
  test("data only, with an event line, multi-line data", () => {
    expect(encodeFrame({ data: "[DONE]" })).toBe("data: [DONE]\n\n");
    expect(encodeFrame({ event: "ping", data: '{"type":"ping"}' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(encodeFrame({ data: "a\nb" })).toBe("data: a\ndata: b\n\n");
  });
});

describe("sseResponse", () => {
  test("frames in order, the generator's return value reaches the close hook once", async () => {
    const ends: StreamEnd[] = [];
    async function* frames(): AsyncGenerator<SseFrame, StreamEnd> {
      yield { data: "1" };
      yield { event: "x", data: "2" };
      return { outcome: "error", code: "server_shutting_down" };
    }
    const res = sseResponse({ frames: frames(), crashFrame, onClose: (e) => ends.push(e) });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await readAll(res)).toBe("data: 1\n\nevent: x\ndata: 2\n\n");
    expect(ends).toEqual([{ outcome: "error", code: "server_shutting_down" }]);
  });

  test("a crash in the encoder ends with the family's crash frame", async () => {
    const ends: StreamEnd[] = [];
    async function* frames(): AsyncGenerator<SseFrame, void> {
      yield { data: "1" };
      throw new Error("/secret/path boom");
    }
    const body = await readAll(sseResponse({ frames: frames(), crashFrame, onClose: (e) => ends.push(e) }));
    expect(body).toBe('data: 1\n\ndata: {"error":{"message":"internal"}}\n\n');
    expect(body).not.toContain("secret");
    expect(ends).toEqual([{ outcome: "error", code: "server_error" }]);
  });

  test("idle streams get heartbeats; a cancelled stream reports client_gone and stops its generator", async () => {
    const ends: StreamEnd[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let finalized = false;
    async function* frames(): AsyncGenerator<SseFrame, void> {
      try {
        yield { data: "first" };
        await gate;
        yield { data: "late" };
      } finally {
        finalized = true;
      }
    }
    const res = sseResponse({ frames: frames(), heartbeatMs: 20, heartbeat: { event: "ping", data: '{"type":"ping"}' }, crashFrame, onClose: (e) => ends.push(e) });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    expect(dec.decode((await reader.read()).value)).toBe("data: first\n\n");
    expect(dec.decode((await reader.read()).value)).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(dec.decode((await reader.read()).value)).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    await reader.cancel();
    expect(ends).toEqual([{ outcome: "client_gone" }]);
    release();
    // The generator, released, runs on to its finally: the writer returned it rather than dropping it.
    expect(await waitFor(() => finalized, { what: "the generator's finally" })).toBe(true);
  });

  test("without a heartbeat frame, an idle stream gets a comment line", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* frames(): AsyncGenerator<SseFrame, void> {
      await gate;
      yield { data: "x" };
    }
    const reader = sseResponse({ frames: frames(), heartbeatMs: 10, crashFrame, onClose: () => {} }).body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(": keep-alive\n\n");
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: x\n\n");
  });
});
