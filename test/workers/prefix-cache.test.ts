// The prefix cache on the tiny model's real graph, driven both ways (KV in place, and the classic whole-cache copy): a
// hit gives the fresh prefill's logits (within fp32 reordering error) at block boundaries and mid-block, after
// eviction, with rows joining and leaving and long prompts chunked; finished sequences' decode KV serves the next
// turn; scopes keep teams apart unless a prefix is declared public.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import type { PrefixScope } from "../../src/protocol/text.ts";
import type { StepInputs } from "../../workers/text/batch-inputs.ts";
import type { BatchKv } from "../../workers/text/kv-cache.ts";
import type { ForwardResult, ModelRunner } from "../../workers/text/model-runner.ts";
import { type MakeTensor, OrtRunner, type OrtSessionLike } from "../../workers/text/ort-runner.ts";
import { PrefixCache } from "../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../workers/text/prefix-reuse.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { engineHarness } from "../unit/workers/engine-harness.ts";

/** fp32 sums in another order (a chunked or cached prefill against one pass): measured well below this on the tiny model. */
const FP32_REORDER = 1e-3;

/** Records each row's logits of every pass, by the pass's first token column, so a test can read a prefill's. */
class Recording implements ModelRunner {
  passes: { inputs: StepInputs; logits: Float32Array; vocab: number; fedColumns: number; grown: boolean }[] = [];
  constructor(private readonly inner: OrtRunner) {}
  get vocabSize() {
    return this.inner.vocabSize;
  }
  get maxContext() {
    return this.inner.maxContext;
  }
  get padId() {
    return this.inner.padId;
  }
  get spareColumns() {
    return this.inner.spareColumns;
  }
  async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const fedColumns = past?.tensors[0]?.dims[2] ?? 0;
    const fed = past?.tensors[0]?.data.buffer;
    const out = await this.inner.forward(inputs, past);
    // grown: the pass's cache is not the one it was fed (copied to make room for the new columns).
    this.passes.push({ inputs, logits: out.logits.slice(), vocab: out.vocab, fedColumns, grown: past !== null && (out.present[0] as { data: Float32Array }).data.buffer !== fed });
    return out;
  }
}

let runners: Record<"in place" | "copying", () => Recording>;
/** Bytes of one whole block: 16 tokens × layers × (key, value) × KV heads × head size × 4 bytes. */
let blockBytes = 0;

beforeAll(async () => {
  const dir = await tinyModelDir();
  const session = (await ort.InferenceSession.create(join(dir, "onnx", "model.onnx"), { intraOpNumThreads: 1 })) as unknown as OrtSessionLike;
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  const makeTensor: MakeTensor = (type, data, dims) => new ort.Tensor(type as never, data as never, dims);
  blockBytes = 16 * config.num_hidden_layers * 2 * config.num_key_value_heads * config.head_dim * 4;
  const classic: OrtSessionLike = {
    inputNames: session.inputNames,
    inputMetadata: session.inputMetadata,
    outputNames: session.outputNames.filter((n) => !n.startsWith("step_key_values.")),
    run: (feeds, fetches) => session.run(feeds, fetches),
  };
  runners = {
    "in place": () => new Recording(new OrtRunner(session, config, makeTensor, config.vocab_size, 0)),
    copying: () => new Recording(new OrtRunner(classic, config, makeTensor, config.vocab_size, 0)),
  };
});

const TEAM: PrefixScope = { scope: "team:1", publicTokens: 0 };
const ids = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ((i + 1) * 131 + seed * 977) % 2000);

/** An engine with the cache on (`maxBytes`), its harness, and the reuse layer for the figures. */
function cached(runner: Recording, opts: { maxBytes?: number; budget?: number; maxBatch?: number } = {}) {
  const prefix = new PrefixReuse(new PrefixCache(16, opts.maxBytes ?? 64 * 1024 * 1024), "kiln-tiny-v1\0fp32");
  return { ...engineHarness(runner, { maxBatch: opts.maxBatch ?? 4, budget: opts.budget ?? 512, prefix }), prefix };
}

/** The logits a prompt's first token is sampled from, alone on a fresh engine without the cache. */
async function freshLogits(make: () => Recording, prompt: number[]): Promise<{ logits: Float32Array; tokens: number[] }> {
  const runner = make();
  const h = engineHarness(runner, { maxBatch: 1, budget: 512 });
  h.engine.add("x", prompt, greedyParams(8));
  await h.run("x");
  const first = runner.passes[0]!;
  return { logits: first.logits.subarray(0, first.vocab), tokens: h.tokens("x") };
}

function worstDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

for (const kind of ["in place", "copying"] as const) {
  describe(`prefix cache, ${kind}`, () => {
    const shared = ids(40, 1);
    for (const [what, common] of [
      ["at a block boundary", 32],
      ["mid-block", 21],
      ["the whole prompt again", 40],
    ] as const) {
      test(`a hit ${what} gives the fresh prefill's logits and greedy tokens`, async () => {
        const prompt = [...shared.slice(0, common), ...ids(40 - common, 7)].slice(0, 40);
        const want = await freshLogits(runners[kind], prompt);
        const runner = runners[kind]();
        const h = cached(runner);
        h.engine.add("first", shared, greedyParams(4), undefined, TEAM);
        await h.run("first");
        const before = runner.passes.length;
        h.engine.add("x", prompt, greedyParams(8), undefined, TEAM);
        await h.run("x");
        const pass = runner.passes[before]!;
        // The hit leaves at least one token to run (its logits are the answer); a mid-block hit reuses the partial run.
        const hit = Math.min(common, 39);
        expect(pass.inputs.pastLen).toBe(hit);
        expect(pass.inputs.seqLen).toBe(40 - hit);
        expect(h.finish("x")?.cachedTokens).toBe(hit);
        // In place, the past is built with the new columns' room, so the pass writes them there and nothing is copied.
        if (kind === "in place") expect([pass.fedColumns, pass.grown]).toEqual([40, false]);
        expect(worstDiff(pass.logits.subarray(0, pass.vocab), want.logits)).toBeLessThan(FP32_REORDER);
        expect(h.tokens("x")).toEqual(want.tokens);
      });
    }

    test("greedy text equals the uncached engine's with staggered joins, leaves, a chunked long prompt and eviction", async () => {
      const system = ids(48, 3);
      const script = async (h: ReturnType<typeof engineHarness>, scope?: PrefixScope) => {
        h.engine.add("a", [...system, ...ids(5, 11)], greedyParams(30), undefined, scope);
        h.engine.add("b", [...system, ...ids(9, 12)], greedyParams(6), undefined, scope);
        for (let i = 0; i < 3; i++) await h.engine.step();
        h.engine.add("long", [...system, ...ids(70, 13)], greedyParams(20), undefined, scope);
        h.engine.add("c", [...system, ...ids(2, 14)], greedyParams(25), undefined, scope);
        for (let i = 0; i < 4; i++) await h.engine.step();
        h.engine.add("d", [...system, ...ids(70, 13).slice(0, 50), 5], greedyParams(12), undefined, scope);
        await h.run("a", "b", "long", "c", "d");
        return Object.fromEntries(["a", "b", "long", "c", "d"].map((id) => [id, h.tokens(id)]));
      };
      const plain = engineHarness(runners[kind](), { maxBatch: 3, budget: 24 });
      const want = await script(plain);
      // A budget of a few blocks: blocks are evicted while the script runs, and what remains stays exact.
      const h = cached(runners[kind](), { maxBatch: 3, budget: 24, maxBytes: 6 * blockBytes });
      const got = await script(h, TEAM);
      expect(got).toEqual(want);
      const stats = h.prefix.stats();
      expect(stats.hitTokens).toBeGreaterThan(0);
      expect(stats.evictions).toBeGreaterThan(0);
      expect(stats.bytes).toBeLessThanOrEqual(6 * blockBytes);
      expect(stats.blocks).toBeGreaterThan(0);
    });

    test("a finished conversation's decoded tokens serve as the next turn's prefix", async () => {
      const runner = runners[kind]();
      const h = cached(runner);
      const turn1 = ids(20, 5);
      h.engine.add("t1", turn1, greedyParams(30), undefined, TEAM);
      await h.run("t1");
      const reply = h.tokens("t1");
      expect(reply.length).toBe(30);
      // The next turn re-sends the history: prompt, the reply, then new text.
      const turn2 = [...turn1, ...reply, ...ids(10, 6)];
      const want = await freshLogits(runners[kind], turn2);
      const before = runner.passes.length;
      h.engine.add("t2", turn2, greedyParams(8), undefined, TEAM);
      await h.run("t2");
      // Everything the first turn fed is cached: its prompt and all but its last sampled token (never fed).
      expect(h.finish("t2")?.cachedTokens).toBe(turn1.length + reply.length - 1);
      const pass = runner.passes[before]!;
      expect(worstDiff(pass.logits.subarray(0, pass.vocab), want.logits)).toBeLessThan(FP32_REORDER);
      expect(h.tokens("t2")).toEqual(want.tokens);
    });
  });
}

describe("prefix cache scopes", () => {
  test("another team finds nothing; a declared public opening is shared, and only whole blocks inside it", async () => {
    const h = cached(runners["in place"]());
    const prompt = ids(64, 9);
    h.engine.add("mine", prompt, greedyParams(2), undefined, { scope: "team:1", publicTokens: 40 });
    await h.run("mine");
    h.engine.add("theirs-private", prompt, greedyParams(2), undefined, { scope: "team:2", publicTokens: 0 });
    await h.run("theirs-private");
    expect(h.finish("theirs-private")?.cachedTokens).toBeUndefined();
    // Blocks ending within the 40 public tokens (two of 16) are public: 32 positions, never the 8 after them.
    h.engine.add("theirs-public", prompt, greedyParams(2), undefined, { scope: "team:2", publicTokens: 40 });
    await h.run("theirs-public");
    expect(h.finish("theirs-public")?.cachedTokens).toBe(32);
    h.engine.add("mine-again", prompt, greedyParams(2), undefined, { scope: "team:1", publicTokens: 40 });
    await h.run("mine-again");
    expect(h.finish("mine-again")?.cachedTokens).toBe(63);
  });

  test("a sequence added without a scope neither reads nor writes the cache", async () => {
    const h = cached(runners["in place"]());
    const prompt = ids(50, 4);
    h.engine.add("anon", prompt, greedyParams(2));
    await h.run("anon");
    expect(h.prefix.stats().blocks).toBe(0);
    h.engine.add("team", prompt, greedyParams(2), undefined, TEAM);
    await h.run("team");
    expect(h.finish("team")?.cachedTokens).toBeUndefined();
    expect(h.prefix.stats().blocks).toBeGreaterThan(0);
  });

  test("sequences sharing a long prompt wait for the one computing it, then prefill only their own tail", async () => {
    const runner = runners["in place"]();
    const h = cached(runner, { budget: 32 });
    const system = ids(96, 2);
    for (let i = 0; i < 4; i++) h.engine.add(`q${i}`, [...system, ...ids(6, 20 + i)], greedyParams(3), undefined, TEAM);
    await h.run("q0", "q1", "q2", "q3");
    const stats = h.prefix.stats();
    // One of them computes the 96 shared positions (and its 6); the others 6 each, plus what a partial hit recomputes.
    expect(stats.prefillTokens).toBeLessThan(96 + 4 * 6 + 3 * 16);
    expect(stats.hitTokens).toBeGreaterThanOrEqual(3 * 96);
    for (let i = 1; i < 4; i++) expect(h.finish(`q${i}`)?.cachedTokens).toBeGreaterThanOrEqual(96);
  });
});
