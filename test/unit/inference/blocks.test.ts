import { describe, expect, test } from "bun:test";
import { BlockFramer, collectChoice, type CoreEvent, joinedText, type ParsedEvent, toolCalls } from "../../../src/inference/blocks.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

const frame = (events: ParsedEvent[]) => {
  const f = new BlockFramer();
  return [...events.flatMap((e) => f.push(e)), ...f.end()];
};

describe("BlockFramer", () => {
  test("reasoning, then a call, then text: ordered blocks with explicit start and end", () => {
    const out = frame([
      { type: "reasoning", text: "think " },
      { type: "reasoning", text: "more" },
      { type: "tool_call_start", id: "call_1", name: "f" },
      { type: "tool_call_delta", arguments: '{"a":' },
      { type: "tool_call_delta", arguments: "1}" },
      { type: "tool_call_end" },
      { type: "text", text: "done" },
    ]);
    expect(out).toEqual([
      { type: "block_start", index: 0, block: { kind: "reasoning" } },
      { type: "block_delta", index: 0, delta: "think " },
      { type: "block_delta", index: 0, delta: "more" },
      { type: "block_end", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_call", id: "call_1", name: "f" } },
      { type: "block_delta", index: 1, delta: '{"a":' },
      { type: "block_delta", index: 1, delta: "1}" },
      { type: "block_end", index: 1 },
      { type: "block_start", index: 2, block: { kind: "text" } },
      { type: "block_delta", index: 2, delta: "done" },
      { type: "block_end", index: 2 },
    ]);
  });

  test("empty pieces open nothing; two calls in a row are two blocks", () => {
    const out = frame([
      { type: "text", text: "" },
      { type: "tool_call_start", id: "a", name: "f" },
      { type: "tool_call_end" },
      { type: "tool_call_start", id: "b", name: "g" },
      { type: "tool_call_end" },
    ]);
    expect(out.filter((e) => e.type === "block_start").map((e) => (e as { index: number }).index)).toEqual([0, 1]);
    expect(out).toHaveLength(4);
  });
});

describe("collectChoice", () => {
  async function* events(list: CoreEvent[]) {
    yield* list;
  }

  test("folds blocks, usage and finish into the ordered result", async () => {
    const usage = { inputTokens: 5, outputTokens: 9, reasoningTokens: 3, cachedTokens: 0 };
    const r = await collectChoice(events([
      ...frame([{ type: "reasoning", text: "r" }, { type: "text", text: "a" }, { type: "tool_call_start", id: "c", name: "f" }, { type: "tool_call_delta", arguments: "{}" }, { type: "tool_call_end" }, { type: "text", text: "b" }]),
      { type: "usage", usage },
      { type: "finish", reason: "tool_calls", stopSequence: null },
    ]));
    expect(r.blocks).toEqual([
      { kind: "reasoning", text: "r" },
      { kind: "text", text: "a" },
      { kind: "tool_call", id: "c", name: "f", arguments: "{}" },
      { kind: "text", text: "b" },
    ]);
    expect(joinedText(r.blocks, "text")).toBe("ab");
    expect(toolCalls(r.blocks).map((c) => c.name)).toEqual(["f"]);
    expect(r.usage).toEqual(usage);
    expect(r.finish).toBe("tool_calls");
  });

  test("an error event is thrown", async () => {
    const err = ApiError.backendUnavailable();
    await expect(collectChoice(events([{ type: "error", error: err }]))).rejects.toBe(err);
  });
});
