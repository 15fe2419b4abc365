// The fp32 graph: KV-cache steps equal full recomputation, num_logits_to_keep slices, left-padded batches equal solo runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel } from "../../../src/modelgen/index.ts";
import { tinyModelDir } from "../../helpers/tiny-model.ts";
import { forward, greedy, maxAbsDiff, openDriver, type Driver, type Past } from "./ort-driver.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-build-exact-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const drivers: Record<string, Driver> = {};
beforeAll(async () => {
  drivers.llama = await openDriver(await tinyModelDir());
  await buildModel({ spec: TINY_QWEN2, dtypes: ["fp32"], outDir: join(root, "qwen2") });
  drivers.qwen2 = await openDriver(join(root, "qwen2"));
});

const seq = [5, 300, 41, 1000, 77, 9, 640, 18, 999, 3];

describe.each(["llama", "qwen2"])("tiny %s fp32 graph", (arch) => {
  let d: Driver;
  beforeAll(() => {
    d = drivers[arch]!;
  });

  test("logits with the KV cache step by step equal full recomputation (1e-4)", async () => {
    const full = await forward(d, [seq], [seq.map(() => 1)], null, 0);
    expect(full.dims).toEqual([1, seq.length, d.vocab]);
    let past: Past | null = null;
    let worst = 0;
    for (let i = 0; i < seq.length; i++) {
      const r = await forward(d, [[seq[i]!]], [seq.slice(0, i + 1).map(() => 1)], past, 0);
      past = r.past;
      expect(r.dims).toEqual([1, 1, d.vocab]);
      worst = Math.max(worst, maxAbsDiff(r.logits, full.logits.slice(i * d.vocab, (i + 1) * d.vocab)));
    }
    expect(worst).toBeLessThan(1e-4);
    // Chunked prefill (4 tokens, then 6 with a cache) also agrees.
    const a = await forward(d, [seq.slice(0, 4)], [[1, 1, 1, 1]], null, 0);
    const b = await forward(d, [seq.slice(4)], [seq.map(() => 1)], a.past, 0);
    expect(maxAbsDiff(b.logits, full.logits.slice(4 * d.vocab))).toBeLessThan(1e-4);
  });

  test("num_logits_to_keep: 0 keeps all, k keeps the last k, k > length keeps all", async () => {
    const mask = [seq.map(() => 1)];
    const all = await forward(d, [seq], mask, null, 0);
    const last = await forward(d, [seq], mask, null, 1);
    expect(last.dims).toEqual([1, 1, d.vocab]);
    expect(maxAbsDiff(last.logits, all.logits.slice((seq.length - 1) * d.vocab))).toBe(0);
    const three = await forward(d, [seq], mask, null, 3);
    expect(three.dims).toEqual([1, 3, d.vocab]);
    expect(maxAbsDiff(three.logits, all.logits.slice((seq.length - 3) * d.vocab))).toBe(0);
    const many = await forward(d, [seq], mask, null, 50);
    expect(many.dims).toEqual([1, seq.length, d.vocab]);
  });

  test("a left-padded batch gives each row its solo greedy tokens and logits", async () => {
    const short = [12, 800, 7];
    const long = [400, 3, 1000, 66, 901, 23, 4, 1010];
    const steps = 8;
    const batch = await greedy(d, [short, long], steps);
    const soloShort = await greedy(d, [short], steps);
    const soloLong = await greedy(d, [long], steps);
    expect(batch.tokens[0]).toEqual(soloShort.tokens[0]!);
    expect(batch.tokens[1]).toEqual(soloLong.tokens[0]!);
    for (let s = 0; s < steps; s++) {
      expect(maxAbsDiff(batch.logits[0]![s]!, soloShort.logits[0]![s]!)).toBeLessThan(1e-4);
      expect(maxAbsDiff(batch.logits[1]![s]!, soloLong.logits[0]![s]!)).toBeLessThan(1e-4);
    }
    // Padding positions given as −1 (a plain cumsum) instead of 1 change nothing for the real tokens.
    const minusOne = await greedy(d, [short, long], steps, -1);
    expect(minusOne.tokens).toEqual(batch.tokens);
    for (let s = 0; s < steps; s++) expect(maxAbsDiff(minusOne.logits[0]![s]!, batch.logits[0]![s]!)).toBe(0);
    // The untied head keeps greedy output from repeating one token (tied random embeddings do repeat).
    if (arch === "llama") expect(new Set(soloLong.tokens[0]).size).toBeGreaterThan(1);
  });
});
