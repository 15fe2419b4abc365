import { describe, expect, test } from "bun:test";
import { formatKey, generateSecret, hashSecret, keyFromHeaders, parseKey, secretMatches } from "../../../src/auth/api-key.ts";

describe("api key text", () => {
  test("secrets are long, base62 and distinct", () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(a).not.toBe(b);
  });

  test("both spellings parse to the same id and secret", () => {
    const secret = generateSecret();
    expect(parseKey(formatKey(12, secret))).toEqual({ id: 12, secret });
    expect(parseKey(`LLM_12_${secret}`)).toEqual({ id: 12, secret });
  });

  test("malformed keys are rejected", () => {
    const s = generateSecret();
    for (const bad of ["", "LLM|12", `LLM|x|${s}`, `LLM|12_${s}`, `llm|12|${s}`, `LLM|12|short`, `LLM|0|${s}`, `LLM|12|${s}|x`, `sk-${s}`]) {
      expect(parseKey(bad)).toBeNull();
    }
  });

  test("secret comparison uses the stored hash", () => {
    const s = generateSecret();
    expect(secretMatches(s, hashSecret(s))).toBe(true);
    expect(secretMatches(s + "x", hashSecret(s))).toBe(false);
    expect(secretMatches(s, "abc")).toBe(false);
  });

  test("key from Authorization or x-api-key", () => {
    expect(keyFromHeaders(new Headers({ authorization: "Bearer LLM|1|abc" }))).toBe("LLM|1|abc");
    expect(keyFromHeaders(new Headers({ "x-api-key": "LLM|1|abc" }))).toBe("LLM|1|abc");
    expect(keyFromHeaders(new Headers({ authorization: "Basic xyz" }))).toBeNull();
    expect(keyFromHeaders(new Headers())).toBeNull();
  });
});
