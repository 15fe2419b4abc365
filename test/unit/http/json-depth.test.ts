import { describe, expect, test } from "bun:test";
import { JsonBodyParser, jsonDepth, parseJsonBody } from "../../../src/http/json-depth.ts";
import { apiRefusalOf } from "../../helpers/api-refusal.ts";

const bytes = (s: string) => new TextEncoder().encode(s);


describe("jsonDepth", () => {
  test.each([
    ["1", 0],
    ["{}", 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['{"a":"[[[[{{{{"}', 1],
    ['{"a":"\\"[[["}', 1],
    ['["\\\\",[1]]', 2],
  ])("%s has depth %d", (s, d) => expect(jsonDepth(bytes(s))).toBe(d));

  test("stops early once past the limit", () => {
    expect(jsonDepth(bytes("[".repeat(1_000_000)), 10)).toBe(11);
  });
});

describe("parseJsonBody", () => {
  test("parses a normal body", () => {
    expect(parseJsonBody(bytes('{"model":"m","messages":[{"role":"user","content":"hé"}]}'), 64)).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hé" }],
    });
  });

  test("100,000 nested arrays are refused in milliseconds, before JSON.parse", () => {
    const t0 = performance.now();
    const e = apiRefusalOf(() => parseJsonBody(bytes("[".repeat(100_000) + "]".repeat(100_000)), 64));
    expect(performance.now() - t0).toBeLessThan(50);
    expect(e.status).toBe(400);
    expect(e.message).toBe("The request body is nested more than 64 levels deep.");
  });

  test("exactly the limit is fine, one more is not", () => {
    expect(parseJsonBody(bytes("[".repeat(64) + "]".repeat(64)), 64)).toBeArray();
    expect(apiRefusalOf(() => parseJsonBody(bytes("[".repeat(65) + "]".repeat(65)), 64)).status).toBe(400);
  });

  test("empty, truncated, non-UTF-8 bodies are 400s with their own messages", () => {
    expect(apiRefusalOf(() => parseJsonBody(new Uint8Array(0), 64)).message).toMatch(/empty/);
    expect(apiRefusalOf(() => parseJsonBody(bytes('{"model": "x", '), 64)).message).toMatch(/not valid JSON/);
    expect(apiRefusalOf(() => parseJsonBody(new Uint8Array([0x7b, 0xff, 0x7d]), 64)).message).toMatch(/UTF-8/);
  });
});

describe("JsonBodyParser (chunk by chunk)", () => {
  const feed = (pieces: (string | Uint8Array)[], maxDepth = 64) => {
    const p = new JsonBodyParser(maxDepth);
    for (const piece of pieces) p.push(typeof piece === "string" ? bytes(piece) : piece);
    return p.finish();
  };

  test("strings, escapes and multi-byte characters split across chunks", () => {
    const euro = bytes("€");
    const bs = "\\";
    // a = [[[\ (an escaped backslash split from its pair), b = x"[[[[ (an escaped quote split from its backslash).
    expect(feed(['{"a":"[[[', bs, bs, '"', ',"b":"x' + bs, '"[[[[', '"}'], 2)).toEqual({ a: "[[[" + bs, b: 'x"[[[[' });
    expect(feed(['{"c":"', euro.slice(0, 1), euro.slice(1), '"}'])).toEqual({ c: "€" });
  });

  test("too deep is refused at the chunk that passes the limit, before the rest arrives", () => {
    const p = new JsonBodyParser(3);
    p.push(bytes("[[["));
    expect(() => p.push(bytes("["))).toThrow("nested more than 3 levels");
  });

  test("a chunk without structural bytes leaves the state alone", () => {
    expect(feed(['{"a":"', "x".repeat(100_000), '"}'], 1)).toEqual({ a: "x".repeat(100_000) });
    expect(() => feed(["[", " ".repeat(1000), "[]]"], 1)).toThrow("nested more than 1 levels");
  });

  test("invalid UTF-8 in any chunk is a 400", () => {
    expect(() => feed(['{"a":"', new Uint8Array([0xc3]), '"}'])).toThrow("not valid UTF-8");
  });
});
