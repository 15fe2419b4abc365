// A tool_use block's input from the arguments the model wrote: exact JSON objects as they are, a call cut by
// max_tokens (or malformed) completed to the object it begins.
import { describe, expect, test } from "bun:test";
import { toolInput as rawToolInput } from "../../../src/api/messages/tool-input.ts";

/** The input as a client reads it (numbers are kept as the model's text until serialized). */
const toolInput = (text: string) => {
  const { input, exact } = rawToolInput(text);
  return { input: JSON.parse(JSON.stringify(input)), exact };
};

describe("toolInput", () => {
  test("an exact object, or nothing at all, is exact", () => {
    expect(toolInput('{"city": "Paris", "n": [1, 2]}')).toEqual({ input: { city: "Paris", n: [1, 2] }, exact: true });
    expect(toolInput("")).toEqual({ input: {}, exact: true });
  });

  test("a cut object is completed where it stops: open strings and containers closed, a dangling key dropped", () => {
    expect(toolInput('{"city": "Par')).toEqual({ input: { city: "Par" }, exact: false });
    expect(toolInput('{"a": {"b": [1, 2')).toEqual({ input: { a: { b: [1, 2] } }, exact: false });
    expect(toolInput('{"a": 1, "b')).toEqual({ input: { a: 1 }, exact: false });
    expect(toolInput('{"a": 1, "b":')).toEqual({ input: { a: 1 }, exact: false });
    expect(toolInput('{"a": "x\\')).toEqual({ input: { a: "x" }, exact: false });
    expect(toolInput('{"a": tru')).toEqual({ input: {}, exact: false });
  });

  test("numbers serialize back exactly as the model wrote them, never rounded or rewritten (issue 40, item 9)", () => {
    const text = '{"a": 1.50e5, "b": [3120713005001105.123456789, -0.0], "c": 1e400}';
    expect(JSON.stringify(rawToolInput(text).input)).toBe(text.replace(/ /g, ""));
    expect(JSON.stringify(rawToolInput('{"n": 12.50, "m": [1e2').input)).toBe('{"n":12.50,"m":[1e2]}');
  });

  test("malformed or non-object arguments give the empty object, never a throw", () => {
    expect(toolInput('{"city": Paris}')).toEqual({ input: {}, exact: false });
    expect(toolInput("[1, 2]")).toEqual({ input: {}, exact: false });
    expect(toolInput("not json")).toEqual({ input: {}, exact: false });
  });
});
