// What the page of one response reads from its stored JSON, and what a cancel from the page came to.
import { describe, expect, test } from "bun:test";
import { cancelOutcome, clipText, MAX_SHOWN_CHARS, outputText, summarizeResponse } from "../../../src/dashboard/tabs/response-summary.ts";

const message = (...texts: string[]) => ({ type: "message", role: "assistant", content: texts.map((text) => ({ type: "output_text", text, annotations: [] })) });

describe("outputText", () => {
  test("joins a message's output_text parts, and messages with a blank line; other items and parts are left out", () => {
    const output = [
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thinking" }] },
      message("Hello, ", "world."),
      { type: "function_call", name: "lookup", arguments: "{}" },
      { type: "message", content: [{ type: "refusal", refusal: "no" }, { type: "output_text", text: "Second." }] },
    ];
    expect(outputText(output)).toBe("Hello, world.\n\nSecond.");
  });

  test("anything that is not an output list reads as no text", () => {
    for (const bad of [null, "text", {}, [null, 1, { type: "message", content: "x" }, { type: "message", content: [{ type: "output_text", text: 5 }] }]]) expect(outputText(bad)).toBe("");
  });
});

describe("clipText", () => {
  test("keeps short text whole and cuts long text at the limit", () => {
    expect(clipText("abc", 5)).toBe("abc");
    expect(clipText("abcdefgh", 5)).toBe("abcde");
  });

  test("never ends in half of a surrogate pair", () => {
    expect(clipText("abcd😀xyz", 5)).toBe("abcd");
    expect(clipText("abc😀xyz", 5)).toBe("abc😀");
  });
});

describe("summarizeResponse", () => {
  test("usage, end time and the other output items of a completed response", () => {
    const s = summarizeResponse(JSON.stringify({
      status: "completed", completed_at: 1700000100, error: null, incomplete_details: null,
      output: [message("Hi"), { type: "function_call", name: "get_weather" }, { type: "web_search_call" }],
      usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 4 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 42 },
    }));
    expect(s).toEqual({
      readable: true, text: "Hi", textChars: 2, completedAt: 1700000100, error: null, incompleteReason: null,
      usage: { input: 12, cached: 4, output: 30, reasoning: 10, total: 42 },
      otherItems: [{ type: "function_call", name: "get_weather" }, { type: "web_search_call", name: null }],
    });
  });

  test("a failed response's error and an incomplete one's reason", () => {
    expect(summarizeResponse(JSON.stringify({ error: { code: "server_error", message: "boom" }, output: [], usage: null })).error).toEqual({ code: "server_error", message: "boom" });
    expect(summarizeResponse(JSON.stringify({ incomplete_details: { reason: "max_output_tokens" }, output: [] })).incompleteReason).toBe("max_output_tokens");
  });

  test("long text is cut and its full length kept", () => {
    const s = summarizeResponse(JSON.stringify({ output: [message("x".repeat(MAX_SHOWN_CHARS + 7))] }));
    expect(s.text.length).toBe(MAX_SHOWN_CHARS);
    expect(s.textChars).toBe(MAX_SHOWN_CHARS + 7);
  });

  test("JSON that cannot be read, or is not an object, is unreadable rather than a crash", () => {
    for (const bad of ["{not json", "[]", "null"]) expect(summarizeResponse(bad)).toMatchObject({ readable: false, text: "", usage: null, error: null });
  });
});

describe("cancelOutcome", () => {
  test("a queued or running response that ends cancelled is done", () => {
    expect(cancelOutcome("resp_1", "queued", "cancelled")).toEqual({ kind: "done", message: "Cancelled response resp_1." });
    expect(cancelOutcome("resp_1", "in_progress", "cancelled").kind).toBe("done");
  });

  test("one whose run has not stopped yet is pending", () => {
    expect(cancelOutcome("resp_1", "in_progress", "in_progress")).toMatchObject({ kind: "pending", message: expect.stringContaining("ends cancelled as soon as it does") });
  });

  test("one that had ended, or ended before the cancel reached it, is refused and says so", () => {
    expect(cancelOutcome("resp_1", "completed", "completed")).toEqual({ kind: "refused", message: "Response resp_1 had already ended (completed), so there is nothing to cancel. Nothing was changed." });
    expect(cancelOutcome("resp_1", "cancelled", "cancelled")).toEqual({ kind: "refused", message: "Response resp_1 was already cancelled." });
    expect(cancelOutcome("resp_1", "in_progress", "completed")).toEqual({ kind: "refused", message: "Response resp_1 ended (completed) before the cancel reached it. Nothing was changed." });
  });
});
