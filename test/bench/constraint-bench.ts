// Figures for the JSON output constraint on the qwen2-0.5b preset's vocabulary (151,936 tokens): set-up,
// compile time per schema, mask cost per decoding step at batch 1 and 16, memory. Not a test: run with
// `.tools/node_modules/@oven/bun-linux-x64/bin/bun test/bench/constraint-bench.ts`.
import { buildTokenizer, specialId } from "../../src/modelgen/tokenizer.ts";
import { ConstraintCompiler, type ConstraintSpec } from "../../workers/text/grammar/constraint-compiler.ts";
import type { ConstraintMatcher } from "../../workers/text/grammar/constraint-matcher.ts";
import { grammarVocabFromTokenizer } from "../../workers/text/grammar/grammar-vocab.ts";
import { allowedIds, applyMask, isAllowed, maskWords } from "../../workers/text/grammar/token-mask.ts";
import { createRng } from "../../workers/text/prng.ts";
import type { TokenizerJson } from "../../workers/text/token-bytes.ts";

const SIZE = 151936;
const STEPS = Number(process.env.STEPS ?? 300);
const mb = () => (process.memoryUsage().rss / 2 ** 20).toFixed(0);
const ms = (t: number) => `${t.toFixed(3)} ms`;

const obj = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });
const SCHEMAS: Record<string, ConstraintSpec> = {
  "tool arguments (3 fields)": { kind: "json_schema", schema: obj({ city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } }) },
  "nested (object→array→object, enum, $ref)": {
    kind: "json_schema",
    schema: { $defs: { tag: obj({ k: { enum: ["a", "b", "c"] }, n: { type: ["integer", "null"] } }) }, ...obj({ name: { type: "string" }, groups: { type: "array", items: obj({ tags: { type: "array", items: { $ref: "#/$defs/tag" } }, score: { type: "number" } }) }, ok: { type: "boolean" } }) },
  },
  "recursive tree ($ref #)": { kind: "json_schema", schema: obj({ v: { type: "integer" }, kids: { type: "array", items: { $ref: "#" } } }) },
  "enum of 200 strings": { kind: "json_schema", schema: { enum: Array.from({ length: 200 }, (_, i) => `value-${i}`) } },
  json_object: { kind: "json_object" },
};

const tok = buildTokenizer(SIZE, 32768);
let t0 = performance.now();
const vocab = grammarVocabFromTokenizer(tok.tokenizerJson as TokenizerJson, { size: SIZE, stopIds: [specialId(SIZE, "<|im_end|>"), specialId(SIZE, "<|endoftext|>")] });
console.log(`grammarVocabFromTokenizer (exact bytes of ${SIZE} tokens): ${ms(performance.now() - t0)}, rss ${mb()} MiB`);
t0 = performance.now();
const compiler = await ConstraintCompiler.create(vocab);
console.log(`ConstraintCompiler.create (load xgrammar, index vocabulary): ${ms(performance.now() - t0)}, rss ${mb()} MiB`);

for (const [name, spec] of Object.entries(SCHEMAS)) {
  t0 = performance.now();
  await compiler.compile(spec);
  const first = performance.now() - t0;
  t0 = performance.now();
  await compiler.compile(spec);
  console.log(`compile ${name}: ${ms(first)} (cached: ${ms(performance.now() - t0)})`);
}
console.log(`rss after compiling ${compiler.cached} constraints: ${mb()} MiB`);

/** `batch` rows decoding at once, each restarting when it finishes; per-step mask, apply and accept costs. */
async function run(batch: number, spec: ConstraintSpec): Promise<void> {
  const compiled = await compiler.compile(spec);
  const rng = createRng(batch);
  const rows: ConstraintMatcher[] = [];
  for (let r = 0; r < batch; r++) rows.push(await compiled.matcher());
  const masks = rows.map(() => new Uint32Array(maskWords(SIZE)));
  const logits = new Float32Array(SIZE);
  const closers = vocab.byteLevel.flatMap((s, id) => (s.length <= 3 && /["\]}]/.test(s) ? [id] : []));
  let maskT = 0, applyT = 0, acceptT = 0, finished = 0;
  const stepTimes: number[] = [];
  for (let step = 0; step < STEPS; step++) {
    const a = performance.now();
    const counts = await Promise.all(rows.map((m, r) => m.fillMask(masks[r]!)));
    const b = performance.now();
    maskT += b - a;
    stepTimes.push(b - a);
    for (let r = 0; r < batch; r++) {
      const c = performance.now();
      applyMask(logits.fill(0), masks[r]!);
      applyT += performance.now() - c;
      // The bench's stand-in for sampling: stop when allowed half the time, lean to closing tokens otherwise.
      const mask = masks[r]!;
      const stop = vocab.stopIds.find((s) => isAllowed(mask, s));
      let pick: number;
      const closing = rng() < 0.35 ? closers.filter((id) => isAllowed(mask, id)) : [];
      if (stop !== undefined && rng() < 0.5) pick = stop;
      else if (closing.length) pick = closing[Math.floor(rng() * closing.length)]!;
      else if (counts[r]! * 16 >= SIZE) do pick = Math.floor(rng() * SIZE); while (!isAllowed(mask, pick));
      else { const ids = allowedIds(mask, SIZE); pick = ids[Math.floor(rng() * ids.length)]!; }
      const d = performance.now();
      if (!rows[r]!.accept(pick)) throw new Error("an allowed token was refused");
      acceptT += performance.now() - d;
      if (rows[r]!.done) {
        finished++;
        rows[r]!.dispose();
        rows[r] = await compiled.matcher();
      }
    }
  }
  for (const m of rows) m.dispose();
  stepTimes.sort((x, y) => x - y);
  const pct = (p: number) => ms(stepTimes[Math.min(stepTimes.length - 1, Math.floor(p * stepTimes.length))]!);
  console.log(`  batch ${String(batch).padStart(2)}: fillMask ${ms(maskT / STEPS)}/step (${ms(maskT / STEPS / batch)}/row; step p50 ${pct(0.5)}, p99 ${pct(0.99)}, max ${pct(1)}), applyMask ${ms(applyT / STEPS / batch)}/row, accept ${ms(acceptT / STEPS / batch)}/row; ${finished} values finished; rss ${mb()} MiB`);
}

for (const [name, spec] of Object.entries(SCHEMAS)) {
  console.log(`${STEPS} steps, ${name}:`);
  for (const batch of [1, 16]) await run(batch, spec);
}
