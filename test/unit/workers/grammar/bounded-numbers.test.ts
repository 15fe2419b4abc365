// Issue 40, item 9: every number a JSON constraint allows parses to a finite double (exponents and digits bounded).
import { describe, expect, test } from "bun:test";
import * as xg from "@mlc-ai/web-xgrammar";
import { boundNumbers, NUMBER_BOUNDS, NUMBER_RULES } from "../../../../workers/text/grammar/bounded-numbers.ts";
import { drive, tinyFixture } from "./vocab-fixtures.ts";

const NUMBERS = { type: "object", properties: { x: { type: "number" }, n: { type: "integer" } }, required: ["x", "n"], additionalProperties: false };

describe("bounded JSON numbers", () => {
  test("xgrammar prints the number rules boundNumbers replaces (a new xgrammar must not slip through unbounded)", async () => {
    const ebnf = await xg.Testings._jsonSchemaToEBNF(JSON.stringify(NUMBERS), true, -1, undefined, true, 1);
    for (const [from, to] of NUMBER_RULES) {
      expect(ebnf.split("\n")).toContain(from);
      expect(boundNumbers(ebnf).split("\n")).toContain(to);
    }
    expect(() => boundNumbers('basic_number ::= [0-9]+\nroot ::= basic_number')).toThrow("unexpected basic_number rule");
  });

  test("the issue's exponent, a 3-digit exponent and 17-digit integers are refused; finite forms pass", async () => {
    const f = await tinyFixture();
    const compiled = await f.compiler.compile({ kind: "json_schema", schema: NUMBERS });
    const run = async (text: string) => drive(await compiled.matcher(), f.vocab, f.encode(text));
    for (const bad of [
      '{"x": 3120713005001105e10554091376700082132225600, "n": 1}',
      '{"x": 1e308, "n": 1}',
      `{"x": ${"9".repeat(NUMBER_BOUNDS.integer + 1)}, "n": 1}`,
      `{"x": 1, "n": ${"9".repeat(NUMBER_BOUNDS.integer + 1)}}`,
      `{"x": 0.${"1".repeat(NUMBER_BOUNDS.fraction + 1)}, "n": 1}`,
    ]) {
      expect((await run(bad)).rejectedAt).toBeGreaterThanOrEqual(0);
    }
    for (const good of ['{"x": -12.5e-7, "n": -42}', '{"x": 0, "n": 0}', `{"x": ${"9".repeat(16)}.${"9".repeat(16)}E+99, "n": ${"9".repeat(16)}}`]) {
      expect((await run(good)).complete).toBe(true);
      const parsed = JSON.parse(good);
      expect(Number.isFinite(parsed.x) && Number.isFinite(parsed.n)).toBe(true);
    }
    // json_object (any object) is bounded the same way.
    const any = await f.compiler.compile({ kind: "json_object" });
    expect((await drive(await any.matcher(), f.vocab, f.encode('{"a": [1e999]}'))).rejectedAt).toBeGreaterThanOrEqual(0);
    expect((await drive(await any.matcher(), f.vocab, f.encode('{"a": [1e99]}'))).complete).toBe(true);
  });
});
