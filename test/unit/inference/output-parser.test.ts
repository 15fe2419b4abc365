import { describe, expect, test } from "bun:test";
import type { ParsedEvent as CoreEvent } from "../../../src/inference/blocks.ts";
import { HERMES_TOOL_CALL, THINK } from "../../../src/inference/prompt-format.ts";
import { parseToolCallBody, readPartialCall } from "../../../src/inference/call-body.ts";
import { heldSuffix, OutputParser } from "../../../src/inference/output-parser.ts";

const BOTH = { thinking: THINK, toolCall: HERMES_TOOL_CALL };

function run(chunks: string[], opts: { thinking: typeof THINK | null; toolCall: typeof HERMES_TOOL_CALL | null; singleCall?: boolean } = BOTH): CoreEvent[] {
  let n = 0;
  const p = new OutputParser({ ...opts, newCallId: () => `call_${++n}` });
  return [...chunks.flatMap((c) => p.push(c)), ...p.end()];
}

/** Joins adjacent text/reasoning events so assertions do not depend on chunking. */
function squash(events: CoreEvent[]) {
  const out: CoreEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (last && (e.type === "text" || e.type === "reasoning") && last.type === e.type) last.text += e.text;
    else out.push({ ...e });
  }
  return out;
}

describe("OutputParser", () => {
  test("plain text passes through; a partial marker at the end is held back, not lost", () => {
    expect(squash(run(["Hello <", "b>world"]))).toEqual([{ type: "text", text: "Hello <b>world" }]);
    const p = new OutputParser(BOTH);
    expect(p.push("abc<too")).toEqual([{ type: "text", text: "abc" }]);
    expect(p.end()).toEqual([{ type: "text", text: "<too" }]);
  });

  test("reasoning is split out, across any chunking", () => {
    const whole = "<think>\nLet me see.\n</think>\nThe answer is 4.";
    const expected: CoreEvent[] = [
      { type: "reasoning", text: "Let me see." },
      { type: "text", text: "The answer is 4." },
    ];
    expect(squash(run([whole]))).toEqual(expected);
    expect(squash(run(whole.split("")))).toEqual(expected);
  });

  test("tool calls become start/arguments/end with ids, whitespace between calls dropped", () => {
    const text = 'Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>';
    for (const chunks of [[text], text.split("")]) {
      expect(squash(run(chunks))).toEqual([
        { type: "text", text: "Checking." },
        { type: "tool_call_start", id: "call_1", name: "get_weather" },
        { type: "tool_call_delta", arguments: '{"city":"Paris"}' },
        { type: "tool_call_end" },
        { type: "tool_call_start", id: "call_2", name: "now" },
        { type: "tool_call_delta", arguments: "{}" },
        { type: "tool_call_end" },
      ]);
    }
  });

  test("with parallel tool calls off only the first call is kept, a cut one after it too; text between stays", () => {
    const text = 'A<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call> then<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call><tool_call>\n{"name": "h", "arg';
    for (const chunks of [[text], text.split("")]) {
      expect(squash(run(chunks, { ...BOTH, singleCall: true }))).toEqual([
        { type: "text", text: "A" },
        { type: "tool_call_start", id: "call_1", name: "f" },
        { type: "tool_call_delta", arguments: '{"x":1}' },
        { type: "tool_call_end" },
        { type: "text", text: " then" },
      ]);
    }
    expect(squash(run([text])).filter((e) => e.type === "tool_call_start")).toHaveLength(3);
  });

  test("a call the output ended inside is a cut call with the arguments written so far, across any chunking", () => {
    const text = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par';
    for (const chunks of [[text], text.split("")]) {
      expect(squash(run(chunks))).toEqual([
        { type: "text", text: "Sure." },
        { type: "tool_call_start", id: "call_1", name: "get_weather" },
        { type: "tool_call_delta", arguments: '{"city": "Par' },
        { type: "tool_call_end", cut: true },
      ]);
    }
    // Cut before its name was whole: nothing to report, and no markup either.
    expect(squash(run(['Sure.<tool_call>\n{"name": "get_w']))).toEqual([{ type: "text", text: "Sure." }]);
    // Cut right after the name: a call with no arguments yet.
    expect(squash(run(['<tool_call>{"name": "f", "arguments": ']))).toEqual([
      { type: "tool_call_start", id: "call_1", name: "f" },
      { type: "tool_call_end", cut: true },
    ]);
  });

  test("a closed but malformed call is still a call when its name can be read; otherwise its body is text without markers", () => {
    expect(squash(run(['<tool_call>{"name": "f", "arguments": {"city": Paris}}</tool_call>']))).toEqual([
      { type: "tool_call_start", id: "call_1", name: "f" },
      { type: "tool_call_delta", arguments: '{"city": Paris}' },
      { type: "tool_call_end" },
    ]);
    expect(squash(run(["<tool_call>not json</tool_call>"]))).toEqual([{ type: "text", text: "not json" }]);
  });

  test("markers never reach the answer: stray closes and opens inside a block are dropped", () => {
    expect(squash(run(["a</tool_call>b</think>c"]))).toEqual([{ type: "text", text: "abc" }]);
    expect(squash(run(["<think>x<tool_call>y</tool_call><think>z</think>w"]))).toEqual([
      { type: "reasoning", text: "xyz" },
      { type: "text", text: "w" },
    ]);
    const call = run(['<tool_call>{"name": "f", <think>"arguments": {}}</tool_call>']);
    expect(squash(call)).toEqual([{ type: "tool_call_start", id: "call_1", name: "f" }, { type: "tool_call_delta", arguments: "{}" }, { type: "tool_call_end" }]);
  });

  test("a thinking block opened after the answer began is answer text, never reasoning (issue 40)", () => {
    expect(squash(run(["<think>plan</think>Hello.<think>more</think> Bye."]))).toEqual([
      { type: "reasoning", text: "plan" },
      { type: "text", text: "Hello.more Bye." },
    ]);
    // After a call, too; and when the output ends inside such a block its text is still the answer's.
    const afterCall = squash(run(['<tool_call>{"name": "f", "arguments": {}}</tool_call><think>', "late"]));
    expect(afterCall.map((e) => e.type)).toEqual(["tool_call_start", "tool_call_delta", "tool_call_end", "text"]);
    expect(afterCall[3]).toEqual({ type: "text", text: "late" });
    // Whitespace alone is not an answer: a block after it is still the model's thinking.
    expect(squash(run(["\n\n<think>x</think>y"])).map((e) => e.type)).toEqual(["reasoning", "text"]);
  });

  test("markers are plain text when the feature is off", () => {
    expect(squash(run(["<think>hi</think><tool_call>{}</tool_call>"], { thinking: null, toolCall: null }))).toEqual([
      { type: "text", text: "<think>hi</think><tool_call>{}</tool_call>" },
    ]);
  });

  test("helpers", () => {
    expect(heldSuffix("abc<thi", ["<think>"])).toBe(4);
    expect(heldSuffix("abc", ["<think>"])).toBe(0);
    expect(parseToolCallBody('{"name":"f","arguments":"{\\"a\\":1}"}')).toEqual({ name: "f", arguments: '{"a":1}' });
    expect(parseToolCallBody('{"name":"f"}')).toEqual({ name: "f", arguments: "{}" });
    expect(parseToolCallBody('{"name":"","arguments":{}}')).toBeNull();
    expect(parseToolCallBody('{"name":"f","arguments":[1]}')).toBeNull();
    expect(readPartialCall('{"name": "f", "arguments": {"a": [1, 2', false)).toEqual({ name: "f", arguments: '{"a": [1, 2' });
    expect(readPartialCall('{"name": "f\\"q", "arguments": {"a": 1}', true)).toEqual({ name: 'f"q', arguments: '{"a": 1}' });
    expect(readPartialCall('{"name": "f", "arguments": {"a": x}}', true)).toEqual({ name: "f", arguments: '{"a": x}' });
    expect(readPartialCall('{"name": "f"}', true)).toEqual({ name: "f", arguments: "{}" });
    // Cut before the arguments began: none, not the text that would have led to them.
    expect(readPartialCall('{"name": "f", "argu', false)).toEqual({ name: "f", arguments: "" });
    expect(readPartialCall('{"name": "f"', false)).toEqual({ name: "f", arguments: "" });
    expect(readPartialCall('{"name": "f", "argu}', true)).toEqual({ name: "f", arguments: "{}" });
    expect(readPartialCall('{"arguments": {}, "name": "f"}', true)).toBeNull();
    expect(readPartialCall('{"name": "", "arguments": {}}', true)).toBeNull();
  });
});
