// Every supported keyword, driven on real vocabularies: valid texts pass token by token and end complete;
// invalid texts are refused exactly at the first bad byte, by the mask and by accept() alike.
import { describe, expect, test } from "bun:test";
import { KEYWORD_CASES } from "./keyword-cases.ts";
import { byteToken, drive, greedyEncoder, qwenFixture, tinyFixture, type VocabFixture } from "./vocab-fixtures.ts";

const utf8 = new TextEncoder();

for (const load of [tinyFixture, qwenFixture]) {
  describe(`keywords on ${load === tinyFixture ? "the tiny model's" : "the qwen2-0.5b preset's"} vocabulary`, () => {
    // Three real tokenizations of every text: the tokenizer's own, longest-match, and one byte per token.
    const encodings = (f: VocabFixture) => ({
      tokenizer: f.encode,
      longest: greedyEncoder(f.vocab),
      bytes: (t: string) => Array.from(utf8.encode(t), (b) => byteToken(f.vocab, b)),
    });

    for (const c of KEYWORD_CASES) {
      test(c.keyword, async () => {
        const f = await load();
        const compiled = await f.compiler.compile(c.spec);
        for (const [how, encode] of Object.entries(encodings(f))) {
          for (const text of c.valid) {
            const m = await compiled.matcher();
            const r = await drive(m, f.vocab, encode(text));
            expect({ how, text, ...r }).toEqual({ how, text, rejectedAt: -1, acceptedBytes: utf8.encode(text).length, complete: true, stopAllowed: true });
            m.dispose();
          }
          if (c.invalid) {
            const { prefix, bad } = c.invalid;
            const m = await compiled.matcher();
            const ids = encode(prefix + bad);
            const r = await drive(m, f.vocab, ids);
            const at = utf8.encode(prefix).length;
            // Everything before the bad byte was accepted, and the refused token is the one holding it.
            expect(r.rejectedAt).toBeGreaterThanOrEqual(0);
            expect(r.acceptedBytes).toBeLessThanOrEqual(at);
            expect(r.acceptedBytes + f.vocab.byteLevel[ids[r.rejectedAt]!]!.length).toBeGreaterThan(at);
            m.dispose();
          }
          if (c.incomplete) {
            const m = await compiled.matcher();
            const r = await drive(m, f.vocab, encode(c.incomplete));
            expect({ how, ...r }).toEqual({ how, rejectedAt: -1, acceptedBytes: utf8.encode(c.incomplete).length, complete: false, stopAllowed: false });
            m.dispose();
          }
        }
      });
    }
  });
}

describe("UTF-8 split across tokens", () => {
  test("a character's bytes in separate tokens: no quote or stop inside it, and a wrong continuation is refused", async () => {
    for (const f of [await tinyFixture(), await qwenFixture()]) {
      const compiled = await f.compiler.compile({ kind: "json_schema", schema: { type: "string" } });
      const b = (x: number) => byteToken(f.vocab, x);
      const quote = b(0x22);
      // "日" is E6 97 A5: after E6 only a continuation byte may follow, never the closing quote.
      let m = await compiled.matcher();
      let r = await drive(m, f.vocab, [quote, b(0xe6), quote]);
      expect(r.rejectedAt).toBe(2);
      m.dispose();
      m = await compiled.matcher();
      r = await drive(m, f.vocab, [quote, b(0xe6), b(0x41)]);
      expect(r.rejectedAt).toBe(2);
      m.dispose();
      // "é" (C3 A9) and "日本" (E6 97 A5 E6 9C AC) one byte at a time, then the string closes.
      m = await compiled.matcher();
      r = await drive(m, f.vocab, [quote, b(0xc3), b(0xa9), b(0xe6), b(0x97), b(0xa5), b(0xe6), b(0x9c), b(0xac), quote]);
      expect(r).toEqual({ rejectedAt: -1, acceptedBytes: 10, complete: true, stopAllowed: true });
      m.dispose();
      // A lone continuation byte is not UTF-8 at all.
      m = await compiled.matcher();
      expect((await drive(m, f.vocab, [quote, b(0xa9)])).rejectedAt).toBe(1);
      m.dispose();
    }
  });

  test("an enum value split mid-character must continue with exactly its next byte", async () => {
    const f = await qwenFixture();
    const compiled = await f.compiler.compile({ kind: "json_schema", schema: { enum: ["日本", "日"] } });
    const b = (x: number) => byteToken(f.vocab, x);
    const m = await compiled.matcher();
    expect((await drive(m, f.vocab, [b(0x22), b(0xe6), b(0x97)])).rejectedAt).toBe(-1);
    expect(m.accept(b(0xa6))).toBe(false);
    expect(m.accept(b(0xa5))).toBe(true);
    expect(m.isComplete()).toBe(false);
    m.dispose();
  });
});
