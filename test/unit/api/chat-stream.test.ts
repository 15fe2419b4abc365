import { describe, expect, test } from "bun:test";
import { ChatChunkEncoder, sseData } from "../../../src/api/chat/stream.ts";

describe("chat chunk encoding", () => {
  const enc = () => new ChatChunkEncoder({ id: "chatcmpl-1", created: 7, model: "m-1", includeUsage: true });

  test("the first event of a choice opens it with the role; text and finish follow", () => {
    const e = enc();
    const chunks = [...e.encode(0, { type: "text", text: "Hi" }), ...e.encode(0, { type: "finish", reason: "stop", stopSequence: null })] as any[];
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([{ role: "assistant", content: "" }, { content: "Hi" }, {}]);
    expect(chunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, "stop"]);
    expect(chunks[0]).toMatchObject({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 7, model: "m-1", usage: null });
  });

  test("tool calls stream as index/id/name then arguments", () => {
    const e = enc();
    e.encode(1, { type: "text", text: "" });
    const start = e.encode(1, { type: "tool_call_start", index: 0, id: "call_1", name: "f" })[0] as any;
    const args = e.encode(1, { type: "tool_call_delta", index: 0, arguments: '{"a":1}' })[0] as any;
    expect(start.choices[0]).toMatchObject({ index: 1, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] } });
    expect(args.choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] });
  });

  test("usage chunk has no choices; SSE framing", () => {
    expect(enc().usage(3, 4)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(sseData("[DONE]")).toBe("data: [DONE]\n\n");
    expect(sseData({ a: 1 })).toBe('data: {"a":1}\n\n');
  });
});
