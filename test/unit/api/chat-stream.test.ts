// Chat Completions chunk encoding and its usage object.
import { describe, expect, test } from "bun:test";
import { ChatChunkEncoder, chatUsage } from "../../../src/api/chat/stream.ts";

describe("chat chunk encoding", () => {
  const enc = () => new ChatChunkEncoder({ id: "chatcmpl-1", created: 7, model: "m-1", service_tier: "default", includeUsage: true });

  test("the first event of a choice opens it with the role; text deltas and finish follow", () => {
    const e = enc();
    const chunks = [
      ...e.encode(0, { type: "block_start", index: 0, block: { kind: "text" } }),
      ...e.encode(0, { type: "block_delta", index: 0, delta: "Hi" }),
      ...e.encode(0, { type: "block_end", index: 0 }),
      ...e.encode(0, { type: "finish", reason: "stop", stopSequence: null }),
    ] as any[];
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([{ role: "assistant", content: "" }, { content: "Hi" }, {}]);
    expect(chunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, "stop"]);
    expect(chunks[0]).toMatchObject({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 7, model: "m-1", usage: null });
  });

  test("reasoning blocks stream as reasoning_content; tool calls as index/id/name then arguments, numbered per choice", () => {
    const e = enc();
    e.encode(1, { type: "block_start", index: 0, block: { kind: "reasoning" } });
    expect((e.encode(1, { type: "block_delta", index: 0, delta: "hmm" })[0] as any).choices[0].delta).toEqual({ reasoning_content: "hmm" });
    const start = e.encode(1, { type: "block_start", index: 1, block: { kind: "tool_call", id: "1", name: "f" } })[0] as any;
    const args = e.encode(1, { type: "block_delta", index: 1, delta: '{"a":1}' })[0] as any;
    expect(start.choices[0]).toMatchObject({ index: 1, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] } });
    expect(args.choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] });
    const second = e.encode(1, { type: "block_start", index: 2, block: { kind: "tool_call", id: "2", name: "g" } })[0] as any;
    expect(second.choices[0].delta.tool_calls[0].index).toBe(1);
  });

  test("a cancelled choice finishes as stop; the usage chunk has no choices and counts reasoning", () => {
    expect((enc().encode(0, { type: "finish", reason: "cancelled", stopSequence: null })[1] as any).choices[0].finish_reason).toBe("stop");
    expect(enc().usage({ inputTokens: 3, outputTokens: 4, reasoningTokens: 2, cachedTokens: 0 })).toMatchObject({
      choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, completion_tokens_details: { reasoning_tokens: 2 } },
    });
    expect(enc().usage({ inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0 }).usage).toEqual({
      prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  test("chatUsage: cached prompt tokens in prompt_tokens_details, always present, and still part of prompt_tokens", () => {
    expect(chatUsage({ inputTokens: 80, outputTokens: 5, reasoningTokens: 0, cachedTokens: 64 })).toEqual({
      prompt_tokens: 80, completion_tokens: 5, total_tokens: 85, prompt_tokens_details: { cached_tokens: 64 },
    });
    expect(chatUsage({ inputTokens: 80, outputTokens: 5, reasoningTokens: 3, cachedTokens: 0 })).toEqual({
      prompt_tokens: 80, completion_tokens: 5, total_tokens: 85, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 3 },
    });
  });
});
