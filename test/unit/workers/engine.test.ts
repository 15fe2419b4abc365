import { describe, expect, test } from "bun:test";
import type { SeqDelta, SeqFinish } from "../../../src/protocol/text.ts";
import { Engine } from "../../../workers/text/engine.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { FakeRunner, referenceGreedy } from "./fake-runner.ts";

const enc = new TextEncoder();
// Each token reads back as "<id>," so the emitted text reveals the exact token sequence.
const tokenBytes = (id: number) => enc.encode(`${id},`);
const tokensOf = (text: string) => text.split(",").filter(Boolean).map(Number);

const greedy = greedyParams;

function harness(maxBatch: number, runner = new FakeRunner(), prefillTokenBudget?: number) {
  const reports: { deltas: SeqDelta[]; finished: SeqFinish[] }[] = [];
  const engine = new Engine(runner, { maxBatch, tokenBytes, prefillTokenBudget, emit: (deltas, finished) => reports.push({ deltas, finished }) });
  const text = (id: string) => reports.flatMap((r) => r.deltas.filter((d) => d.seqId === id).map((d) => d.text)).join("");
  const finish = (id: string) => reports.flatMap((r) => r.finished).find((f) => f.seqId === id);
  /** Index of the first report mentioning the sequence, as a delta or as finished. */
  const firstReport = (id: string) => reports.findIndex((r) => r.deltas.some((d) => d.seqId === id));
  const finishReport = (id: string) => reports.findIndex((r) => r.finished.some((f) => f.seqId === id));
  const drain = async () => {
    for (let i = 0; i < 1000 && engine.hasWork(); i++) await engine.step();
  };
  return { engine, runner, reports, text, finish, firstReport, finishReport, drain };
}

const prompts: Record<string, number[]> = {
  a: [1, 2, 3, 4, 5, 6, 7],
  b: [9],
  c: [4, 4, 4, 30, 31],
  d: [12, 50, 3, 3, 3, 3, 3, 3, 3, 3, 3, 8],
};

describe("Engine", () => {
  test("lastStep says what the step ran: prompt tokens prefilled (padding counted), then rows decoded", async () => {
    const h = harness(4, new FakeRunner(), 8);
    h.engine.add("a", prompts.a!, greedy(3));
    h.engine.add("c", prompts.c!, greedy(3));
    await h.engine.step();
    // Two prompts padded to 7 would take 14 tokens, over the budget of 8: only "a" is prefilled.
    expect(h.engine.lastStep).toEqual({ decodeRows: 0, mediaRows: 0, prefillTokens: 7, encodeMs: 0 });
    await h.engine.step();
    expect(h.engine.lastStep).toEqual({ decodeRows: 1, mediaRows: 0, prefillTokens: 5, encodeMs: 0 });
    await h.engine.step();
    expect(h.engine.lastStep).toEqual({ decodeRows: 2, mediaRows: 0, prefillTokens: 0, encodeMs: 0 });
  });

  test("a lone greedy sequence follows the model and stops at maxTokens", async () => {
    const h = harness(4);
    h.engine.add("a", prompts.a!, greedy(6));
    await h.drain();
    expect(tokensOf(h.text("a"))).toEqual(referenceGreedy(prompts.a!, 6));
    expect(h.finish("a")).toEqual({ seqId: "a", reason: "length", promptTokens: 7, outputTokens: 6 });
    // One prefill, then one decode per further token.
    expect(h.runner.calls.map((c) => c.seqLen)).toEqual([7, 1, 1, 1, 1, 1]);
  });

  test("prompts of different lengths batched together match their solo runs", async () => {
    const h = harness(8);
    for (const [id, p] of Object.entries(prompts)) h.engine.add(id, p, greedy(5 + p.length));
    await h.drain();
    for (const [id, p] of Object.entries(prompts)) expect(tokensOf(h.text(id))).toEqual(referenceGreedy(p, 5 + p.length));
    // All four prefilled in one padded run.
    expect(h.runner.calls[0]).toEqual({ batch: 4, seqLen: 12, pastLen: 0 });
  });

  test("a sequence added mid-batch joins at the next step and everyone stays exact", async () => {
    const h = harness(8);
    h.engine.add("a", prompts.a!, greedy(12));
    h.engine.add("b", prompts.b!, greedy(3));
    await h.engine.step();
    await h.engine.step();
    await h.engine.step();
    h.engine.add("d", prompts.d!, greedy(6));
    await h.engine.step();
    expect(h.firstReport("d")).toBe(3);
    expect(h.engine.counts()).toMatchObject({ active: 2, queued: 0 });
    await h.drain();
    expect(h.finishReport("a")).toBeGreaterThan(h.firstReport("d"));
    for (const [id, n] of [["a", 12], ["b", 3], ["d", 6]] as const) expect(tokensOf(h.text(id))).toEqual(referenceGreedy(prompts[id]!, n));
  });

  test("each step reports every active sequence once", async () => {
    const h = harness(8);
    h.engine.add("a", prompts.a!, greedy(3));
    h.engine.add("c", prompts.c!, greedy(3));
    await h.drain();
    expect(h.reports.length).toBe(3);
    for (const r of h.reports) expect(r.deltas.map((d) => [d.seqId, d.tokens])).toEqual([["a", 1], ["c", 1]]);
  });

  test("maxBatch queues the extra sequences and reuses freed slots at once", async () => {
    const h = harness(2);
    h.engine.add("a", prompts.a!, greedy(2));
    h.engine.add("b", prompts.b!, greedy(8));
    h.engine.add("c", prompts.c!, greedy(4));
    expect(h.engine.counts()).toMatchObject({ active: 0, queued: 3 });
    await h.engine.step();
    expect(h.engine.counts()).toMatchObject({ active: 2, queued: 1 });
    await h.engine.step();
    // "a" finished in step 2, so "c" was prefilled into its slot in that same step.
    expect(h.finishReport("a")).toBe(1);
    expect(h.firstReport("c")).toBe(1);
    expect(h.runner.calls.every((c) => c.batch <= 2)).toBe(true);
    await h.drain();
    for (const [id, n] of [["a", 2], ["b", 8], ["c", 4]] as const) expect(tokensOf(h.text(id))).toEqual(referenceGreedy(prompts[id]!, n));
  });

  test("cancel frees a running slot within one step; a queued cancel ends at once", async () => {
    const h = harness(2);
    h.engine.add("a", prompts.a!, greedy(50));
    h.engine.add("b", prompts.b!, greedy(10));
    h.engine.add("c", prompts.c!, greedy(3));
    h.engine.add("d", prompts.d!, greedy(3));
    await h.engine.step();
    h.engine.cancel("a");
    h.engine.cancel("d");
    h.engine.cancel("nobody");
    await h.engine.step();
    expect(h.finish("a")).toEqual({ seqId: "a", reason: "cancelled", promptTokens: 7, outputTokens: 1 });
    expect(h.finish("d")?.reason).toBe("cancelled");
    expect(h.finishReport("a")).toBe(1);
    expect(h.firstReport("c")).toBe(1);
    expect(h.reports[1]!.deltas.map((d) => d.seqId)).toEqual(["b", "c"]);
    await h.drain();
    expect(tokensOf(h.text("b"))).toEqual(referenceGreedy(prompts.b!, 10));
    expect(tokensOf(h.text("c"))).toEqual(referenceGreedy(prompts.c!, 3));
  });

  test("a failing prefill fails only its own sequences", async () => {
    const runner = new FakeRunner();
    runner.poison = 63;
    const h = harness(8, runner);
    h.engine.add("a", prompts.a!, greedy(6));
    await h.engine.step();
    h.engine.add("bad", [5, 63], greedy(4));
    await h.drain();
    expect(h.finish("bad")).toMatchObject({ reason: "error", outputTokens: 0, message: "inference failed: poisoned input" });
    expect(tokensOf(h.text("a"))).toEqual(referenceGreedy(prompts.a!, 6));
  });

  test("a failing decode fails the decoding batch and the engine keeps serving", async () => {
    const runner = new FakeRunner();
    const h = harness(8, runner);
    const first = referenceGreedy(prompts.a!, 1)[0]!;
    h.engine.add("a", prompts.a!, greedy(5));
    await h.engine.step();
    runner.poison = first;
    await h.engine.step();
    expect(h.finish("a")).toMatchObject({ reason: "error", outputTokens: 1 });
    runner.poison = -1;
    h.engine.add("c", prompts.c!, greedy(4));
    await h.drain();
    expect(tokensOf(h.text("c"))).toEqual(referenceGreedy(prompts.c!, 4));
  });

  test("stop token ids end with reason stop and no text", async () => {
    const expected = referenceGreedy(prompts.c!, 10);
    const stopId = expected[3]!;
    const h = harness(4);
    h.engine.add("c", prompts.c!, greedy(10, { stopTokenIds: [stopId] }));
    await h.drain();
    const upTo = expected.indexOf(stopId);
    expect(tokensOf(h.text("c"))).toEqual(expected.slice(0, upTo));
    expect(h.finish("c")).toEqual({ seqId: "c", reason: "stop", promptTokens: 5, outputTokens: upTo + 1 });
  });

  test("banned token ids are never sampled: the model's greedy choice gives way to its next best", async () => {
    const h = harness(4);
    const banned = referenceGreedy(prompts.a!, 1)[0]!;
    h.engine.add("a", prompts.a!, greedy(1, { bannedTokenIds: [banned] }));
    await h.drain();
    // The fake model's second choice is always the id after its first.
    expect(tokensOf(h.text("a"))).toEqual([(banned + 1) % 64]);
  });

  test("stop sequences cut the text before them and name the stop", async () => {
    const expected = referenceGreedy(prompts.a!, 8);
    const stop = `,${expected[2]},${expected[3]}`;
    const h = harness(4);
    h.engine.add("a", prompts.a!, greedy(8, { stop: ["never", stop] }));
    await h.drain();
    expect(h.text("a")).toBe(`${expected[0]},${expected[1]}`);
    expect(h.finish("a")).toMatchObject({ reason: "stop", stopSequence: stop, outputTokens: 4 });
  });

  test("the context limit ends a sequence with reason length", async () => {
    const h = harness(4, new FakeRunner(10));
    h.engine.add("a", prompts.a!, greedy(100));
    await h.drain();
    expect(h.finish("a")).toMatchObject({ reason: "length", outputTokens: 3 });
  });

  test("malformed adds fail alone", async () => {
    const h = harness(4);
    h.engine.add("empty", [], greedy(3));
    h.engine.add("a", prompts.a!, greedy(3));
    h.engine.add("a", prompts.b!, greedy(3));
    h.engine.add("big", [1, 999], greedy(3));
    await h.drain();
    expect(h.finish("empty")).toMatchObject({ reason: "error", message: "prompt is empty" });
    expect(h.finish("big")).toMatchObject({ reason: "error", promptTokens: 2 });
    expect(h.reports.flatMap((r) => r.finished).filter((f) => f.seqId === "a").map((f) => f.reason)).toEqual(["error", "length"]);
    expect(tokensOf(h.text("a"))).toEqual(referenceGreedy(prompts.a!, 3));
  });

  test("seeded sampling gives the same tokens alone and in a batch", async () => {
    const sampled = { temperature: 1, topP: 1, seed: 1234 };
    const alone = harness(8);
    alone.engine.add("s", prompts.c!, greedy(20, sampled));
    await alone.drain();
    const busy = harness(8);
    busy.engine.add("x", prompts.a!, greedy(20, { ...sampled, seed: 5 }));
    await busy.engine.step();
    busy.engine.add("s", prompts.c!, greedy(20, sampled));
    busy.engine.add("y", prompts.d!, greedy(7));
    await busy.drain();
    const tokens = tokensOf(alone.text("s"));
    expect(tokens.length).toBe(20);
    expect(tokensOf(busy.text("s"))).toEqual(tokens);
    // The fake model offers two likely tokens, so a sampled run differs from greedy somewhere.
    expect(tokens).not.toEqual(referenceGreedy(prompts.c!, 20));
  });

  test("a prompt longer than the prefill budget is prefilled in chunks while the batch keeps decoding", async () => {
    const h = harness(4, new FakeRunner(), 5);
    h.engine.add("a", prompts.a!.slice(0, 5), greedy(10));
    await h.engine.step();
    h.engine.add("d", prompts.d!, greedy(4));
    h.engine.add("b", prompts.b!, greedy(3));
    await h.engine.step();
    expect(h.engine.counts()).toMatchObject({ active: 2, queued: 1 });
    await h.drain();
    // 12 prompt tokens: chunks of 5, 5 and 2 on top of the growing cache, each in a step where "a" also decoded.
    const chunks = h.runner.calls.filter((c) => c.batch === 1 && c.seqLen > 1);
    expect(chunks).toEqual([
      { batch: 1, seqLen: 5, pastLen: 0 },
      { batch: 1, seqLen: 5, pastLen: 0 },
      { batch: 1, seqLen: 5, pastLen: 5 },
      { batch: 1, seqLen: 2, pastLen: 10 },
    ]);
    expect(h.reports.slice(1, 3).every((r) => r.deltas.some((d) => d.seqId === "a"))).toBe(true);
    for (const [id, p, n] of [["a", prompts.a!.slice(0, 5), 10], ["d", prompts.d!, 4], ["b", prompts.b!, 3]] as const) {
      expect(tokensOf(h.text(id))).toEqual(referenceGreedy(p, n));
    }
  });

  test("cancelling a sequence mid-chunking frees its slot", async () => {
    const h = harness(1, new FakeRunner(), 4);
    h.engine.add("d", prompts.d!, greedy(4));
    h.engine.add("b", prompts.b!, greedy(2));
    await h.engine.step();
    expect(h.engine.counts()).toMatchObject({ active: 1, queued: 1 });
    h.engine.cancel("d");
    await h.drain();
    expect(h.finish("d")).toMatchObject({ reason: "cancelled", outputTokens: 0 });
    expect(tokensOf(h.text("b"))).toEqual(referenceGreedy(prompts.b!, 2));
  });

  test("when rows leave, the rest are compacted and padding nobody needs is trimmed", async () => {
    const h = harness(8);
    const long = Array.from({ length: 30 }, (_, i) => i + 1);
    h.engine.add("long", long, greedy(2));
    h.engine.add("b", prompts.b!, greedy(10));
    h.engine.add("mid", prompts.a!, greedy(4));
    h.engine.add("c", prompts.c!, greedy(10));
    await h.drain();
    for (const [id, p, n] of [["long", long, 2], ["b", prompts.b!, 10], ["mid", prompts.a!, 4], ["c", prompts.c!, 10]] as const) {
      expect(tokensOf(h.text(id))).toEqual(referenceGreedy(p, n));
    }
    // After "long" left (step 2), the cache shrank to the longest remaining row: "mid", 7 prompt + 1 fed token.
    expect(h.runner.calls.map((c) => [c.batch, c.pastLen])).toEqual([
      [4, 0],
      [4, 30],
      [3, 8],
      [3, 9],
      [2, 8],
      [2, 9],
      [2, 10],
      [2, 11],
      [2, 12],
      [2, 13],
    ]);
  });
});
