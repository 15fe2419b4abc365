import { describe, expect, test } from "bun:test";
import { outputAsInput, storedInput } from "../../../src/api/responses/items.ts";

describe("stored input items", () => {
  test("a string is one user message with an id", () => {
    const [it] = storedInput("Hi");
    expect(it!.item).toEqual({ id: it!.itemId, type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] });
    expect(it!.itemId).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  test("items keep a given id, get one of their kind otherwise, and spell out their type", () => {
    const items = storedInput([
      { role: "user", content: "a" },
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}", id: "fc_given" },
      { type: "function_call_output", call_id: "call_1", output: "ok" },
      { role: "assistant", content: "b" },
      { type: "reasoning", encrypted_content: "sealed" },
    ] as never);
    expect(items.map((i) => i.itemId.replace(/_[0-9a-f]{32}$/, "_*"))).toEqual(["msg_*", "fc_given", "fco_*", "msg_*", "rs_*"]);
    expect(items[0]!.item).toMatchObject({ type: "message", content: [{ type: "input_text", text: "a" }] });
    expect(items[3]!.item).toMatchObject({ content: [{ type: "output_text", text: "b" }] });
    // A reasoning item's id is the client's to give (rule 5); the row still has one to page by.
    expect(items[4]!.item.id).toBeUndefined();
  });
});

describe("output as input", () => {
  test("web_search_call items are left out and reasoning loses its seal; the rest is as it was", () => {
    const msg = { id: "msg_1", type: "message", role: "assistant", content: [{ type: "output_text", text: "x", annotations: [] }], status: "completed" };
    const out = outputAsInput([
      { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "t" }], encrypted_content: "seal" },
      { id: "ws_1", type: "web_search_call", status: "completed", action: {} },
      msg,
    ]);
    expect(out).toEqual([{ id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "t" }] }, msg]);
  });
});
