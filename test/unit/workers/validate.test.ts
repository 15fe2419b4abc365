import { describe, expect, test } from "bun:test";
import { addProblem, mediaProblem } from "../../../workers/text/validate.ts";

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
    // A prompt being scored may generate nothing (echo with max_tokens 0), never fewer.
    expect(addProblem([1], { ...params, maxTokens: 0, promptLogprobs: 0 }, limits)).toBeNull();
    expect(addProblem([1], { ...params, maxTokens: -1, promptLogprobs: 0 }, limits)).toContain("maxTokens");
    expect(addProblem([1], { ...params, promptLogprobs: 21 }, limits)).toContain("promptLogprobs");
    expect(addProblem([1], { ...params, temperature: -1 }, limits)).toContain("temperature");
    expect(addProblem([1], { ...params, topP: 0 }, limits)).toContain("topP");
    expect(addProblem([1], { ...params, topP: 1.5 }, limits)).toContain("topP");
    expect(addProblem([1], { ...params, seed: NaN }, limits)).toContain("seed");
    expect(addProblem([1], { ...params, stop: [3] }, limits)).toContain("stop must");
    expect(addProblem([1], { ...params, stopTokenIds: ["x"] }, limits)).toContain("stopTokenIds");
    expect(addProblem([1], { ...params, bannedTokenIds: [100] }, limits)).toContain("bannedTokenIds");
    expect(addProblem([1], { ...params, bannedTokenIds: [5] }, limits)).toBeNull();
    expect(addProblem([1], null, limits)).toContain("missing");
  });

  test("checks the one-call rule's ids", () => {
    expect(addProblem([1], { ...params, singleCall: { openId: 7, closeId: 8 } }, limits)).toBeNull();
    expect(addProblem([1], { ...params, singleCall: { opened: true } }, limits)).toBeNull();
    expect(addProblem([1], { ...params, singleCall: { openId: 100 } }, limits)).toContain("singleCall");
    expect(addProblem([1], { ...params, singleCall: { closeId: -1 } }, limits)).toContain("singleCall");
    expect(addProblem([1], { ...params, singleCall: { opened: "yes" } }, limits)).toContain("singleCall");
    expect(addProblem([1], { ...params, singleCall: { startAfter: 1.5 } }, limits)).toContain("singleCall");
    expect(addProblem([1], { ...params, singleCall: null }, limits)).toContain("singleCall");
  });
});

describe("mediaProblem", () => {
  const ids = { image: 7, audio: 8 };
  const image = (at: number, tokens: number, im: unknown = { rgb: new Uint8Array(12), width: 2, height: 2 }) => ({ kind: "image", at, tokens, image: im });
  const audio = (at: number, tokens: number, extra: object = {}) => ({ kind: "audio", at, tokens, samples: new Float32Array(3), sampleRate: 16000, ...extra });
  const prompt = [1, 7, 7, 2, 8, 8, 8, 3];

  test("accepts runs of each kind's own placeholder, and no media at all", () => {
    expect(mediaProblem([image(1, 2), audio(4, 3)], prompt, ids)).toBeNull();
    expect(mediaProblem(undefined, prompt, undefined)).toBeNull();
    expect(mediaProblem([], prompt, undefined)).toBeNull();
  });

  test("refuses media a model cannot take", () => {
    expect(mediaProblem([image(1, 2)], prompt, undefined)).toBe("this model takes no image or audio input");
    expect(mediaProblem([audio(4, 3)], prompt, { image: 7 })).toBe("this model takes no audio input");
    expect(mediaProblem([{ kind: "video", at: 0, tokens: 1 }], prompt, ids)).toBe('media 0: kind must be "image" or "audio"');
    expect(mediaProblem("x", prompt, ids)).toBe("media must be a list");
  });

  test("refuses runs that leave the prompt, miss their placeholders or overlap", () => {
    expect(mediaProblem([image(7, 2)], prompt, ids)).toContain("inside the prompt");
    expect(mediaProblem([image(1, 0)], prompt, ids)).toContain("inside the prompt");
    expect(mediaProblem([image(1.5, 2)], prompt, ids)).toContain("inside the prompt");
    expect(mediaProblem([image(1, 3)], prompt, ids)).toBe("media 0 (image): prompt position 3 is not the image token");
    expect(mediaProblem([audio(4, 3), audio(5, 1)], prompt, ids)).toBe("media 1 (audio): overlaps another input");
  });

  test("refuses malformed images and clips", () => {
    expect(mediaProblem([image(1, 2, { rgb: new Uint8Array(11), width: 2, height: 2 })], prompt, ids)).toContain("rgb holds 11 bytes, 2×2×3 expected");
    expect(mediaProblem([image(1, 2, { bytes: new Uint8Array(0) })], prompt, ids)).toContain("non-empty");
    expect(mediaProblem([image(1, 2, { bytes: Uint8Array.of(1) })], prompt, ids)).toBeNull();
    expect(mediaProblem([image(1, 2, null)], prompt, ids)).toContain("{bytes} or {rgb, width, height}");
    expect(mediaProblem([audio(4, 3, { samples: [0.1] })], prompt, ids)).toContain("samples must be a non-empty Float32Array");
    expect(mediaProblem([audio(4, 3, { sampleRate: 0 })], prompt, ids)).toContain("sampleRate");
  });
});
