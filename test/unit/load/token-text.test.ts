// Prompt text of exact token counts and unique fixed-length prompts for the load scenarios (test/load/token-text.ts).
import { describe, expect, test } from "bun:test";
import { FreshPrompts, oneTokenWords, seededRandom, textOfTokens, WORDS } from "../../load/token-text.ts";

/** A stand-in byte-level tokenizer: split at word boundaries as GPT-2's regex does, then one token per 4 characters. */
const count = (text: string) => (text.match(/ ?[A-Za-z]+| ?\d+| ?[^\sA-Za-z\d]+|\s+/g) ?? []).reduce((n, p) => n + Math.ceil(p.length / 4), 0);

describe("token text", () => {
  const words = oneTokenWords(count);

  test("one-token words are those a space and the word make one token", () => {
    expect(words.length).toBeGreaterThan(16);
    expect(words).toContain("the");
    expect(words).not.toContain("river");
    expect(new Set(words).size).toBe(words.length);
    expect(words.every((w) => WORDS.includes(w))).toBe(true);
  });

  test("seeded randomness repeats per seed and differs across seeds", () => {
    const a = seededRandom("x"), b = seededRandom("x"), c = seededRandom("y");
    const xs = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(xs);
    expect([c(), c(), c()]).not.toEqual(xs);
    expect(xs.every((v) => v >= 0 && v < 1)).toBe(true);
  });

  test("texts hit the count exactly, after a head, the same for the same seed", () => {
    for (const n of [1, 50, 100, 1500]) expect(count(textOfTokens(n, { count, words, seed: "s" }))).toBe(n);
    const t = textOfTokens(1500, { count, words, seed: "s", head: "Session 9f3a0c7e." });
    expect(t.startsWith("Session 9f3a0c7e. ")).toBe(true);
    expect(count(t)).toBe(1500);
    expect(textOfTokens(100, { count, words, seed: "s" })).toBe(textOfTokens(100, { count, words, seed: "s" }));
    expect(textOfTokens(100, { count, words, seed: "s" })).not.toBe(textOfTokens(100, { count, words, seed: "t" }));
  });

  test("impossible counts fail loudly", () => {
    expect(() => textOfTokens(2, { count, words, seed: "s", head: "a much longer head than two tokens" })).toThrow(/could not make a text of 2 tokens/);
    expect(() => textOfTokens(5, { count, words: [], seed: "s" })).toThrow(/no one-token words/);
    // A tokenizer where nothing adds one token at a time never converges.
    expect(() => textOfTokens(7, { count: (t) => 2 * t.split(" ").length, words, seed: "s" })).toThrow(/could not make/);
  });

  test("fresh prompts are all different, all the base's length, and differ from their first word on", () => {
    const base = "Write a short story about a lighthouse.";
    const fresh = new FreshPrompts(base, words, count);
    expect(fresh.length).toBe(count(base));
    const prompts = Array.from({ length: 500 }, () => fresh.next());
    expect(new Set(prompts).size).toBe(500);
    expect(new Set(prompts.map(count))).toEqual(new Set([count(base)]));
    // "Write a" is three tokens here, so three fresh words take their place.
    expect(prompts.every((p) => /^\w+ \w+ \w+ short story about a lighthouse\.$/.test(p))).toBe(true);
    expect(prompts[0]!.split(" ")[0]).not.toBe(prompts[1]!.split(" ")[0]);
    // Another start gives the same sequence further on.
    expect(new FreshPrompts(base, words, count, 7).next()).toBe(prompts[7]!);
  });

  test("fresh prompts refuse a tokenizer with too few words, a short base, one that breaks the length, and running out", () => {
    expect(() => new FreshPrompts("a b c d", words.slice(0, 15), count)).toThrow(/16 and 4 needed/);
    expect(() => new FreshPrompts("Hi there", words, count)).toThrow(/too short/);
    const uneven = new FreshPrompts("a b c d", [...words.slice(0, 15), "odd"], (t) => (t.includes("odd") ? 99 : count(t)));
    expect(() => Array.from({ length: 16 ** 3 }, () => uneven.next())).toThrow(/is 99 tokens, the base 4/);
    const few = new FreshPrompts("a b c d", words.slice(0, 16), count);
    for (let i = 0; i < 16 ** 3; i++) few.next();
    expect(() => few.next()).toThrow(/all 4096 combinations used/);
  });
});
