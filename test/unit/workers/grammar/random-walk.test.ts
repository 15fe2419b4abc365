// Property: a decoder that only ever picks allowed tokens ends, once the constraint allows a stop, with bytes
// that are UTF-8, parse as JSON and validate against the schema. Every sampled token must be accepted, and
// tokens outside the mask must be refused.
import { describe, expect, test } from "bun:test";
import type { ConstraintSpec } from "../../../../workers/text/grammar/constraint-compiler.ts";
import { allowedIds, isAllowed, maskWords } from "../../../../workers/text/grammar/token-mask.ts";
import { createRng } from "../../../../workers/text/prng.ts";
import { KEYWORD_CASES } from "./keyword-cases.ts";
import { schemaViolation } from "./subset-validator.ts";
import { qwenFixture, tinyFixture, tokenBytes, type VocabFixture } from "./vocab-fixtures.ts";

const NESTED = {
  $defs: { tag: { type: "object", properties: { k: { enum: ["a", "b", "日本"] }, n: { type: ["integer", "null"] } }, required: ["k", "n"], additionalProperties: false } },
  type: "object",
  properties: {
    name: { type: "string" },
    groups: { type: "array", items: { type: "object", properties: { tags: { type: "array", items: { $ref: "#/$defs/tag" } }, score: { type: "number" } }, required: ["tags", "score"], additionalProperties: false } },
    ok: { type: "boolean" },
  },
  required: ["name", "groups", "ok"],
  additionalProperties: false,
};

const SPECS: [string, ConstraintSpec][] = [["nested object/array/enum/$ref", { kind: "json_schema", schema: NESTED }], ...KEYWORD_CASES.map((c): [string, ConstraintSpec] => [c.keyword, c.spec])];
const MAX_STEPS = 400;

const closerCache = new WeakMap<VocabFixture, number[]>();
/** Short tokens holding a quote or closing bracket, collected once per vocabulary. */
function closersOf(f: VocabFixture): number[] {
  let ids = closerCache.get(f);
  if (!ids) {
    ids = [];
    for (let id = 0; id < f.vocab.size; id++) {
      const s = f.vocab.byteLevel[id]!;
      if (s.length <= 3 && /["\]}]/.test(s)) ids.push(id);
    }
    closerCache.set(f, ids);
  }
  return ids;
}

/** A uniformly chosen allowed id; by rejection when many are allowed (inside strings), else from the list. */
function uniformAllowed(mask: Uint32Array, size: number, count: number, rng: () => number): number {
  if (count * 16 >= size) {
    for (;;) {
      const id = Math.floor(rng() * size);
      if (isAllowed(mask, id)) return id;
    }
  }
  const ids = allowedIds(mask, size);
  return ids[Math.floor(rng() * ids.length)]!;
}

interface Walk {
  text: string | null;
  steps: number;
}

/** One seeded walk; leans towards closing tokens so that strings, arrays and recursion end. */
async function walk(f: VocabFixture, spec: ConstraintSpec, seed: number, closers: number[]): Promise<Walk> {
  const rng = createRng(seed);
  const m = await (await f.compiler.compile(spec)).matcher();
  const mask = new Uint32Array(maskWords(f.vocab.size));
  const bytes: number[] = [];
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      const count = await m.fillMask(mask);
      expect(count).toBeGreaterThan(0);
      const stop = f.vocab.stopIds.find((s) => isAllowed(mask, s));
      expect(stop !== undefined).toBe(m.isComplete());
      // A few refused ids must be refused by accept() too (and leave the state as it was).
      for (let k = 0; k < 3; k++) {
        const id = Math.floor(rng() * f.vocab.size);
        if (!isAllowed(mask, id)) expect(m.accept(id)).toBe(false);
      }
      let pick: number;
      if (stop !== undefined && rng() < 0.5) pick = stop;
      else {
        const closing = rng() < 0.35 ? closers.filter((id) => isAllowed(mask, id)) : [];
        pick = closing.length ? closing[Math.floor(rng() * closing.length)]! : uniformAllowed(mask, f.vocab.size, count, rng);
      }
      expect(m.accept(pick)).toBe(true);
      if (f.vocab.stopIds.includes(pick)) {
        expect(m.done).toBe(true);
        return { text: new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes)), steps: step };
      }
      bytes.push(...tokenBytes(f.vocab, pick));
    }
    return { text: null, steps: MAX_STEPS };
  } finally {
    m.dispose();
  }
}

for (const [label, load, walks] of [["tiny model", tinyFixture, 24], ["qwen2-0.5b preset", qwenFixture, 8]] as const) {
  describe(`random walks on the ${label}'s vocabulary`, () => {
    for (const [name, spec] of SPECS) {
      test(name, async () => {
        const f = await load();
        const closers = closersOf(f);
        let completed = 0;
        for (let seed = 1; seed <= walks; seed++) {
          const r = await walk(f, spec, seed, closers);
          if (r.text === null) continue;
          completed++;
          let value: unknown;
          try { value = JSON.parse(r.text); } catch { throw new Error(`not JSON: ${r.text}`); }
          if (spec.kind === "json_schema") expect(schemaViolation(spec.schema, value)).toBeNull();
          else expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
        }
        // Most walks must actually finish, or the property would hold vacuously.
        expect(completed).toBeGreaterThanOrEqual(Math.ceil(walks * 0.75));
      });
    }
  });
}

describe("the validator the walks rely on", () => {
  test("refuses what the schema forbids", () => {
    const ok = { name: "x", groups: [{ tags: [{ k: "日本", n: null }], score: 1.5 }], ok: true };
    expect(schemaViolation(NESTED, ok)).toBeNull();
    expect(schemaViolation(NESTED, { ...ok, extra: 1 })).toContain("unexpected property extra");
    expect(schemaViolation(NESTED, { ...ok, groups: [{ tags: [{ k: "c", n: 1 }], score: 1 }] })).toContain("not an allowed value");
    expect(schemaViolation(NESTED, { ...ok, groups: [{ tags: [{ k: "a", n: 1.5 }], score: 1 }] })).toContain("is not integer|null");
    expect(schemaViolation(NESTED, { name: "x", ok: true })).toContain("missing groups");
    expect(schemaViolation({ anyOf: [{ type: "string" }, { type: "null" }] }, 3)).toContain("anyOf");
  });
});
