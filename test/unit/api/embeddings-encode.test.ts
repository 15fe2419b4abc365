// The format's two encodings of a vector and the request checks that need no model run: the base64 is the
// little-endian float32 bytes (decoded here as the official clients decode it), inputs as a list, sizes, dimensions.
import { describe, expect, test } from "bun:test";
import { encodeVector, float32Base64 } from "../../../src/api/embeddings/encode.ts";
import { checkRows, inputList, MAX_INPUTS, outputDimensions } from "../../../src/api/embeddings/validate.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

/** What openai-node does with a base64 embedding: the bytes as a Float32Array (little-endian machines). */
const decode = (b64: string) => Array.from(new Float32Array(new Uint8Array(Buffer.from(b64, "base64")).buffer));

describe("float32Base64", () => {
  test("is the float32 bytes, little-endian, and decodes to the same floats", () => {
    const v = Float32Array.from([1, -0.5, 0.1, 3.4028234663852886e38]);
    expect(float32Base64(Float32Array.from([1]))).toBe("AACAPw=="); // 1.0f = 0x3F800000, low byte first
    expect(decode(float32Base64(v))).toEqual(Array.from(v));
    expect(encodeVector(v, "float")).toEqual(Array.from(v));
    expect(encodeVector(v, "base64")).toBe(float32Base64(v));
  });
});

function refusal(fn: () => unknown): { param: string | null; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return { param: e.param, message: e.message };
  }
  throw new Error("expected an ApiError");
}

describe("inputList", () => {
  test("a string, strings, token ids and arrays of token ids become one list", () => {
    expect(inputList("a")).toEqual(["a"]);
    expect(inputList(["a", "b"])).toEqual(["a", "b"]);
    expect(inputList([1, 2])).toEqual([[1, 2]]);
    expect(inputList([[1], [2, 3]])).toEqual([[1], [2, 3]]);
  });

  test("empty input, an empty item and more than MAX_INPUTS items are refused naming input", () => {
    expect(refusal(() => inputList([]))).toMatchObject({ param: "input", message: expect.stringMatching(/must not be empty/) });
    expect(refusal(() => inputList(""))).toMatchObject({ param: "input", message: expect.stringMatching(/input\[0\] is empty/) });
    expect(refusal(() => inputList(["a", ""]))).toMatchObject({ param: "input", message: expect.stringMatching(/input\[1\] is empty/) });
    expect(refusal(() => inputList([[1], []]))).toMatchObject({ param: "input" });
    expect(MAX_INPUTS).toBe(2048);
    expect(inputList(Array(MAX_INPUTS).fill("x"))).toHaveLength(MAX_INPUTS);
    expect(refusal(() => inputList(Array(MAX_INPUTS + 1).fill("x")))).toMatchObject({ param: "input", message: expect.stringMatching(/2049 items.*at most 2048/) });
  });
});

describe("checkRows and outputDimensions", () => {
  test("an input past the context or naming an unknown token is refused naming input", () => {
    expect(() => checkRows([[1, 2, 3]], 3, 10)).not.toThrow();
    expect(refusal(() => checkRows([[1], [1, 2, 3, 4]], 3, 10))).toMatchObject({ param: "input", message: expect.stringMatching(/input\[1\] is 4 tokens.*maximum context length is 3/) });
    expect(refusal(() => checkRows([[1, 10]], 3, 10))).toMatchObject({ param: "input", message: expect.stringMatching(/token id 10/) });
  });

  const trained = { pooling: "mean" as const, normalize: true, dimensions: 64, truncations: [16, 32, 64] };
  const untrained = { ...trained, truncations: [64] };

  test("dimensions: the full size or absent always; a cut only for a model trained for it, within its sizes", () => {
    expect(outputDimensions(untrained, undefined, "m")).toBe(64);
    expect(outputDimensions(untrained, 64, "m")).toBe(64);
    expect(refusal(() => outputDimensions(untrained, 32, "m"))).toMatchObject({ param: "dimensions", message: expect.stringMatching(/not trained for shorter vectors/) });
    expect(outputDimensions(trained, 16, "m")).toBe(16);
    expect(outputDimensions(trained, 40, "m")).toBe(40);
    expect(refusal(() => outputDimensions(trained, 8, "m"))).toMatchObject({ param: "dimensions", message: expect.stringMatching(/from 16 to 64/) });
    expect(refusal(() => outputDimensions(trained, 65, "m"))).toMatchObject({ param: "dimensions" });
  });
});
