import { describe, expect, test } from "bun:test";
import { addProblem } from "../../../workers/engine/validate.ts";

const limits = { vocabSize: 100, maxContext: 10 };
const params = { maxTokens: 5, temperature: 0, topP: 1, seed: 1, stop: [], stopTokenIds: [2] };

describe("addProblem", () => {
  test("accepts a valid request", () => {
    expect(addProblem([1, 2, 3], params, limits)).toBeNull();
  });

  test("rejects empty or out-of-vocabulary prompts", () => {
    expect(addProblem([], params, limits)).toBe("prompt is empty");
    expect(addProblem("hi", params, limits)).toBe("prompt is empty");
    expect(addProblem([1, 100], params, limits)).toContain("token id 100");
    expect(addProblem([1, -1], params, limits)).toContain("token id -1");
    expect(addProblem([1.5], params, limits)).toContain("token id 1.5");
  });

  test("rejects prompts that fill the context", () => {
    expect(addProblem(new Array(10).fill(1), params, limits)).toContain("the context holds 10");
    expect(addProblem(new Array(9).fill(1), params, limits)).toBeNull();
  });

  test("rejects bad sampling params", () => {
    expect(addProblem([1], { ...params, maxTokens: 0 }, limits)).toContain("maxTokens");
    expect(addProblem([1], { ...params, temperature: -1 }, limits)).toContain("temperature");
    expect(addProblem([1], { ...params, topP: 0 }, limits)).toContain("topP");
    expect(addProblem([1], { ...params, topP: 1.5 }, limits)).toContain("topP");
    expect(addProblem([1], { ...params, seed: NaN }, limits)).toContain("seed");
    expect(addProblem([1], { ...params, stop: [3] }, limits)).toContain("stop must");
    expect(addProblem([1], { ...params, stopTokenIds: ["x"] }, limits)).toContain("stopTokenIds");
    expect(addProblem([1], null, limits)).toContain("missing");
  });
});
