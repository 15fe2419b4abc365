// Messages as the clients built on it send it (Claude Code, the Anthropic SDKs), against a real kiln: consecutive turns
// of one role combined, adaptive thinking with output_config.effort, and the context error in Anthropic's wording.
// The requests these clients really sent (../shared/clients/) are replayed beside fixtures of the same shape; the
// long Claude Code requests that prefill ~32k tokens are replayed once, in client-replay.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clientRequest, replay } from "../helpers/client-corpus.ts";
import { sseEvents } from "../helpers/seeded.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let contextLength: number;
beforeAll(async () => {
  s = await startTestServer();
  contextLength = s.deps.registry.list()[0]!.contextLength;
});
afterAll(() => s.stop(1000));

type Json = Record<string, any>;
const text = (t: string) => ({ type: "text", text: t });

async function post(body: Json, path = "/v1/messages"): Promise<{ status: number; body: Json; text: string }> {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "x-api-key": s.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, ...body }),
  });
  const raw = await res.text();
  return { status: res.status, body: body.stream ? {} : JSON.parse(raw), text: raw };
}

/** A streamed Messages answer from message_start to message_stop, each event named after its type. */
function expectMessageStream(raw: string): void {
  const types = sseEvents(raw).map((e) => e.type).filter((t) => t !== "ping");
  expect(types[0]).toBe("message_start");
  expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
  for (const frame of raw.trim().split("\n\n")) expect(frame.split("\n")[0]).toBe(`event: ${JSON.parse(frame.split("\n")[1]!.slice(6)).type}`);
}

/** Anthropic's context 400, which Claude Code parses to shrink max_tokens and retry. */
const ANTHROPIC_CONTEXT = /^input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+), decrease input length or `max_tokens` and try again$/;

/** The figures of an Anthropic-worded context 400 (input, output, context), or null when `r` is not one. */
function contextFigures(r: { status: number; body: Json }): number[] | null {
  const m = r.status === 400 && r.body.type === "error" ? ANTHROPIC_CONTEXT.exec(r.body.error?.message ?? "") : null;
  return m ? m.slice(1).map(Number) : null;
}

const CONSECUTIVE = clientRequest("anthropic-python-consecutive-user-turns");
const ADAPTIVE = clientRequest("anthropic-python-adaptive-thinking");
const FIRST = clientRequest("claude-code-first-request");
const FALLBACK = clientRequest("claude-code-first-request-fallback");

describe("consecutive turns of one role are combined, as Anthropic's API does", () => {
  test("user, user: a 200 message, and the prompt is the one user turn holding both blocks", async () => {
    const two = [{ role: "user", content: "hi" }, { role: "user", content: "there" }];
    const r = await post({ max_tokens: 8, messages: two });
    expect([r.status, r.body.type, r.body.role]).toEqual([200, "message", "assistant"]);
    const count = async (messages: Json[]) => (await post({ messages }, "/v1/messages/count_tokens")).body.input_tokens;
    expect(await count(two)).toBe(await count([{ role: "user", content: [text("hi"), text("there")] }]));
  });

  test("four assistant messages in a row, then a user message (Claude Code's --continue), streamed: 200 events", async () => {
    const messages = [{ role: "user", content: [text("say hi")] }, ...["one", "two", "three", "four"].map((t) => ({ role: "assistant", content: [text(t)] })), { role: "user", content: [text("now say bye")] }];
    const r = await post({ max_tokens: 8, messages, stream: true });
    expect(r.status).toBe(200);
    expectMessageStream(r.text);
  });

  test.skipIf(!CONSECUTIVE)("replay: the Anthropic Python SDK's two user messages get a 200 message", async () => {
    const res = await replay(s, CONSECUTIVE!);
    const body = (await res.json()) as Json;
    expect([res.status, body.type, body.stop_reason !== null]).toEqual([200, "message", true]);
  });
});

describe("thinking: adaptive (the model decides, within max_tokens) with output_config.effort", () => {
  test("adaptive with each effort is a 200 message that opens with signed thinking", async () => {
    for (const effort of [undefined, "low", "medium", "high", "xhigh", "max"]) {
      const r = await post({ max_tokens: 64, temperature: 0, thinking: { type: "adaptive" }, ...(effort ? { output_config: { effort } } : {}), messages: [{ role: "user", content: "hi" }] });
      expect([effort, r.status, r.body.type, r.body.content[0].type]).toEqual([effort, 200, "message", "thinking"]);
      expect(r.body.content[0].signature.length).toBeGreaterThan(20);
    }
  });

  test("an effort the format does not have is a 400 naming output_config.effort", async () => {
    const r = await post({ max_tokens: 16, thinking: { type: "adaptive" }, output_config: { effort: "extreme" }, messages: [{ role: "user", content: "hi" }] });
    expect([r.status, r.body.type, r.body.error.param]).toEqual([400, "error", "output_config.effort"]);
  });

  test.skipIf(!ADAPTIVE)("replay: the Anthropic Python SDK's adaptive thinking gets a 200 message", async () => {
    const res = await replay(s, ADAPTIVE!);
    expect([res.status, ((await res.json()) as Json).type]).toEqual([200, "message"]);
  });

  test.skipIf(!FIRST)("replay: Claude Code's first request passes its thinking and gets the documented messages.1.role 400 (its system message)", async () => {
    const res = await replay(s, FIRST!);
    const body = (await res.json()) as Json;
    expect([res.status, body.type, body.error.type, body.error.param]).toEqual([400, "error", "invalid_request_error", "messages.1.role"]);
  });
});

describe("the context error on Messages is worded as Anthropic's", () => {
  test("input + max_tokens over the context: Anthropic's wording with the input count, max_tokens and the context length; chat keeps OpenAI's", async () => {
    const messages = [{ role: "user", content: "hi" }];
    const input = (await post({ messages }, "/v1/messages/count_tokens")).body.input_tokens as number;
    for (const stream of [false, true]) {
      const r = await fetch(`${s.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify({ model: s.modelId, max_tokens: contextLength, messages, stream }),
      });
      const body = (await r.json()) as Json;
      expect(contextFigures({ status: r.status, body })).toEqual([input, contextLength, contextLength]);
      expect(body.error).toMatchObject({ type: "invalid_request_error", param: null, code: null });
    }
    const chat = await post({ max_tokens: contextLength, messages }, "/v1/chat/completions");
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toStartWith(`This model's maximum context length is ${contextLength} tokens.`);
  });

  test.skipIf(!FALLBACK)("replay: Claude Code's request with max_tokens the model cannot hold gets the wording Claude Code parses", async () => {
    // max_tokens is raised to the context length, so the request overflows whatever context the built-in has.
    const res = await replay(s, FALLBACK!, { ...FALLBACK!.body, max_tokens: contextLength });
    const figures = contextFigures({ status: res.status, body: (await res.json()) as Json });
    expect(figures?.slice(1)).toEqual([contextLength, contextLength]);
    expect(figures![0]).toBeGreaterThan(1000);
  });
});
