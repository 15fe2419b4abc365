// The compiler's cache and the matcher's contract: bounded cache, shared entries, refusals before xgrammar,
// UTF-8 well-formedness across tokens, isComplete without side effects, forced text, masks on logits, workers.
import { describe, expect, test } from "bun:test";
import { ConstraintCompiler, specKey } from "../../../../workers/text/grammar/constraint-compiler.ts";
import { grammarVocab } from "../../../../workers/text/grammar/grammar-vocab.ts";
import { UnsupportedSchemaError } from "../../../../src/protocol/schema-subset.ts";
import { allowedIds, applyMask, countAllowed, isAllowed, maskWords } from "../../../../workers/text/grammar/token-mask.ts";
import { Sampler } from "../../../../workers/text/sampler.ts";
import { specialId } from "../../../../src/modelgen/tokenizer.ts";
import { byteToken, drive, tinyFixture } from "./vocab-fixtures.ts";

const INT = { kind: "json_schema", schema: { type: "integer" } } as const;
const utf8 = new TextEncoder();

describe("ConstraintCompiler", () => {
  test("equal schemas share one entry whatever their key order; the cache keeps its bound", async () => {
    const f = await tinyFixture();
    const c = await ConstraintCompiler.create(f.vocab, { cacheSize: 2 });
    const a = await c.compile({ kind: "json_schema", schema: { type: "object", properties: {}, additionalProperties: false } });
    expect(await c.compile({ kind: "json_schema", schema: { additionalProperties: false, properties: {}, type: "object" } })).toBe(a);
    expect(specKey({ kind: "json_schema", schema: { b: 1, a: [{ d: 1, c: 2 }] } })).toBe(specKey({ kind: "json_schema", schema: { a: [{ c: 2, d: 1 }], b: 1 } }));
    const live = await a.matcher();
    await c.compile(INT);
    await c.compile({ kind: "json_object" });
    expect(c.cached).toBe(2);
    // The evicted grammar was freed; a matcher started from it before keeps working.
    expect((await drive(live, f.vocab, f.encode("{}"))).complete).toBe(true);
    live.dispose();
    expect(a.disposed).toBe(true);
    expect(a.matcher()).rejects.toThrow("evicted");
    expect(await c.compile({ kind: "json_schema", schema: { type: "object", properties: {}, additionalProperties: false } })).not.toBe(a);
    // compiler.matcher survives evictions racing with it.
    const rows = await Promise.all([INT, { kind: "json_object" } as const, INT, { kind: "json_schema", schema: { type: "null" } } as const].map((s) => c.matcher(s)));
    expect((await drive(rows[3]!, f.vocab, f.encode("null"))).complete).toBe(true);
    for (const m of rows) m.dispose();
    c.dispose();
  });

  test("a schema outside the subset is refused before compiling, naming the keyword", async () => {
    const f = await tinyFixture();
    expect(() => f.compiler.compile({ kind: "json_schema", schema: { type: "string", pattern: "x" } })).toThrow(UnsupportedSchemaError);
    expect(() => f.compiler.compile({ kind: "json_schema", schema: { type: "string", pattern: "x" } })).toThrow('"pattern"');
  });

  test("maxWhitespace 0 gives compact JSON only", async () => {
    const f = await tinyFixture();
    const c = await ConstraintCompiler.create(f.vocab, { maxWhitespace: 0 });
    for (const spec of [{ kind: "json_object" } as const, { kind: "json_schema", schema: { type: "object", properties: { a: { type: "array", items: { type: "integer" } } }, required: ["a"], additionalProperties: false } } as const]) {
      const compiled = await c.compile(spec);
      let m = await compiled.matcher();
      expect((await drive(m, f.vocab, f.encode('{"a":[1,2]}'))).complete).toBe(true);
      m = await compiled.matcher();
      expect((await drive(m, f.vocab, f.encode('{"a": [1,2]}'))).rejectedAt).toBeGreaterThanOrEqual(0);
    }
    c.dispose();
  });
});

describe("ConstraintMatcher", () => {
  test("ill-formed UTF-8 is refused even when each token's bytes look like a sequence", async () => {
    const f = await tinyFixture();
    const compiled = await f.compiler.compile({ kind: "json_schema", schema: { type: "string" } });
    const b = (x: number) => byteToken(f.vocab, x);
    // Overlong (E0 80), surrogate (ED A0), past U+10FFFF (F4 90): the second byte depends on the token before.
    for (const [lead, bad, good] of [[0xe0, 0x80, 0xa0], [0xed, 0xa0, 0x9f], [0xf4, 0x90, 0x8f], [0xf0, 0x80, 0x90]] as const) {
      const m = await compiled.matcher();
      expect((await drive(m, f.vocab, [b(0x22), b(lead)])).rejectedAt).toBe(-1);
      const mask = new Uint32Array(maskWords(f.vocab.size));
      await m.fillMask(mask);
      expect([isAllowed(mask, b(bad)), m.accept(b(bad))]).toEqual([false, false]);
      expect([isAllowed(mask, b(good)), m.accept(b(good))]).toEqual([true, true]);
      m.dispose();
    }
    // Bytes that never occur in UTF-8 are not in the vocabulary at all.
    for (const x of [0xc0, 0xc1, 0xf5, 0xff]) expect(byteToken(f.vocab, x)).toBe(-1);
  });

  test("isComplete asks without moving; accept refuses out-of-range ids; stop ends the row", async () => {
    const f = await tinyFixture();
    const m = await (await f.compiler.compile(INT)).matcher();
    expect(m.isComplete()).toBe(false);
    expect(m.accept(byteToken(f.vocab, 0x34))).toBe(true);
    expect(m.isComplete()).toBe(true);
    expect(m.isComplete()).toBe(true);
    expect(m.accept(byteToken(f.vocab, 0x32))).toBe(true);
    expect([m.accept(-1), m.accept(f.vocab.size), m.accept(1.5)]).toEqual([false, false, false]);
    expect(m.done).toBe(false);
    expect(m.accept(f.vocab.stopIds[1]!)).toBe(true);
    expect(m.done).toBe(true);
    m.dispose();
    m.dispose();
    expect(() => m.isComplete()).toThrow("disposed");
  });

  test("per-row stop ids: a special token such as </tool_call> can end the JSON instead of EOS", async () => {
    const f = await tinyFixture();
    const close = specialId(f.vocab.size, "</tool_call>");
    const compiled = await f.compiler.compile(INT);
    const m = await compiled.matcher({ stopIds: [close] });
    expect(m.stopIds).toEqual([close]);
    const mask = new Uint32Array(maskWords(f.vocab.size));
    expect(m.accept(byteToken(f.vocab, 0x37))).toBe(true);
    await m.fillMask(mask);
    expect([isAllowed(mask, close), ...f.vocab.stopIds.map((id) => isAllowed(mask, id))]).toEqual([true, false, false]);
    expect(m.isComplete()).toBe(true);
    expect(m.accept(f.vocab.stopIds[0]!)).toBe(false);
    expect(m.accept(close)).toBe(true);
    expect(m.done).toBe(true);
    m.dispose();
    expect(compiled.matcher({ stopIds: [] })).rejects.toThrow("stop ids");
    expect(compiled.matcher({ stopIds: [f.vocab.size] })).rejects.toThrow("stop ids");
  });

  test("forcedText gives what must come next in whole characters, and leaves the row where it was", async () => {
    const f = await tinyFixture();
    const m = await f.compiler.matcher({ kind: "json_schema", schema: { type: "object", properties: { city: { enum: ["日本"] } }, required: ["city"], additionalProperties: false } });
    expect(await m.forcedText()).toBe("{");
    expect(m.accept(byteToken(f.vocab, 0x7b))).toBe(true);
    expect(m.accept(byteToken(f.vocab, 0x22))).toBe(true);
    // Whitespace may follow the name, so the forced run stops at its closing quote.
    expect(await m.forcedText()).toBe('city"');
    expect(await m.forcedText(3)).toBe("cit");
    for (const x of utf8.encode('city": "')) expect(m.accept(byteToken(f.vocab, x))).toBe(true);
    expect(await m.forcedText()).toBe('日本"');
    expect(m.accept(byteToken(f.vocab, 0xe6))).toBe(true);
    expect(await m.forcedText()).toBe("");
    m.dispose();
    // 日 (E6 97 A5) and 旧 (E6 97 A7) share two bytes: nothing whole is forced. After é日本 the values part.
    for (const [values, forced] of [[["日x", "旧y"], ""], [["é日本x", "é日本y"], "é日本"]] as const) {
      const row = await f.compiler.matcher({ kind: "json_schema", schema: { enum: [...values] } });
      expect(row.accept(byteToken(f.vocab, 0x22))).toBe(true);
      expect(await row.forcedText()).toBe(forced);
      expect((await drive(row, f.vocab, f.encode(`${values[1]}"`))).complete).toBe(true);
      row.dispose();
    }
  });
});

describe("token masks", () => {
  test("applyMask leaves only allowed logits; the sampler then picks among them at any temperature and top-p", async () => {
    const f = await tinyFixture();
    const m = await (await f.compiler.compile({ kind: "json_schema", schema: { type: "boolean" } })).matcher();
    const mask = new Uint32Array(maskWords(f.vocab.size));
    const n = await m.fillMask(mask);
    const allowed = allowedIds(mask, f.vocab.size);
    expect(n).toBe(allowed.length);
    expect(allowed.map((id) => f.vocab.byteLevel[id]!.replace("Ġ", " ")).every((s) => "true".startsWith(s) || "false".startsWith(s))).toBe(true);
    const sampler = new Sampler();
    let seed = 7;
    const rng = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    for (const [temperature, topP] of [[0, 1], [1, 1], [1, 0.9], [2, 0.5]] as const) {
      for (let k = 0; k < 20; k++) {
        const logits = Float32Array.from({ length: f.vocab.size }, () => rng() * 10);
        applyMask(logits, mask);
        expect(logits.filter((x) => x > -Infinity).length).toBe(n);
        expect(isAllowed(mask, sampler.sample(logits, { temperature, topP }, rng))).toBe(true);
      }
    }
    m.dispose();
  });

  test("countAllowed ignores bits past the vocabulary", () => {
    const mask = new Uint32Array([0xffffffff, 0xffffffff]);
    expect(countAllowed(mask, 40)).toBe(40);
    expect(countAllowed(mask, 64)).toBe(64);
    expect(allowedIds(new Uint32Array([0b1010, 0x80000000]), 64)).toEqual([1, 3, 63]);
  });

  test("grammarVocab refuses stop ids outside the vocabulary and never gives stop tokens text", () => {
    expect(() => grammarVocab({ size: 4, stopIds: [], tokenBytes: () => null })).toThrow("stop token");
    expect(() => grammarVocab({ size: 4, stopIds: [4], tokenBytes: () => null })).toThrow("outside");
    const v = grammarVocab({ size: 3, stopIds: [2], tokenBytes: (id) => utf8.encode(["a", " é", "x"][id]!) });
    expect(v.byteLevel).toEqual(["a", "ĠÃ©", ""]);
  });

  test("the tokenizer's added tokens (<think>, <tool_call>, …) never appear inside constrained JSON", async () => {
    const f = await tinyFixture();
    const think = specialId(f.vocab.size, "<think>");
    expect(f.vocab.byteLevel[think]).toBe("");
    const m = await f.compiler.matcher({ kind: "json_schema", schema: { type: "string" } });
    const mask = new Uint32Array(maskWords(f.vocab.size));
    expect(m.accept(byteToken(f.vocab, 0x22))).toBe(true);
    await m.fillMask(mask);
    expect([isAllowed(mask, think), m.accept(think), isAllowed(mask, specialId(f.vocab.size, "<tool_call>"))]).toEqual([false, false, false]);
    m.dispose();
  });
});

describe("inside a Bun worker", () => {
  test("xgrammar loads, compiles and masks in a worker thread", async () => {
    const worker = new Worker(new URL("./worker-probe.ts", import.meta.url).href);
    const reply = await new Promise<{ allowed: string[]; complete: boolean }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
    });
    worker.terminate();
    expect(reply).toEqual({ allowed: ["t", "f"], complete: true });
  });
});
