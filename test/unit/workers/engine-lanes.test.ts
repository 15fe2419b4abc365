// The engine's lanes on the deterministic fake model: interactive sequences go first and get a row at the next step,
// background rows are preempted for them and sit out their prefill, and a preempted row resumes to the exact output.
import { describe, expect, test } from "bun:test";
import type { ServiceTier } from "../../../src/inference/service-tier.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { Engine } from "../../../workers/text/engine.ts";
import { INTERACTIVE_GRACE_MS } from "../../../workers/text/lane-choice.ts";
import { PrefixCache } from "../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../workers/text/prefix-reuse.ts";
import { engineHarness, tokenBytes } from "./engine-harness.ts";
import { FakeRunner, referenceGreedy } from "./fake-runner.ts";

const prompt = (seed: number, length = 6) => Array.from({ length }, (_, i) => (seed * 7 + i * 3) % 60 + 1);

function lanes(maxBatch: number, budget?: number) {
  const h = engineHarness(new FakeRunner(), { maxBatch, ...(budget ? { budget } : {}) });
  const add = (id: string, lane: ServiceTier | undefined, maxTokens: number, seed = id.charCodeAt(0) + id.length * 13) =>
    h.engine.add(id, prompt(seed), greedyParams(maxTokens), undefined, undefined, lane);
  /** One step; returns the ids that got a token in it. */
  const step = async () => {
    const before = h.reports.length;
    await h.engine.step();
    return h.reports.slice(before).flatMap((r) => r.deltas.filter((d) => d.tokens > 0).map((d) => d.seqId));
  };
  const firstStep = (id: string) => h.reports.findIndex((r) => r.deltas.some((d) => d.seqId === id && d.tokens > 0));
  return { ...h, add, step, firstStep };
}

describe("Engine lanes", () => {
  test("an interactive sequence beside a full batch of background rows gets its first token at the next step, and the preempted rows' greedy output is exact", async () => {
    const h = lanes(2);
    h.add("b1", "batch", 24, 1);
    h.add("b2", "flex", 24, 2);
    for (let i = 0; i < 4; i++) expect((await h.step()).sort()).toEqual(["b1", "b2"]);
    h.add("i1", "default", 6, 3);
    // The next step prefills i1 alone: both background rows sit it out.
    expect(await h.step()).toEqual(["i1"]);
    expect(h.runner.calls.at(-1)).toMatchObject({ batch: 1, pastLen: 0 });
    // Then i1 decodes beside one background row (one was preempted for it) and never waits.
    for (let i = 0; i < 5; i++) {
      const got = await h.step();
      expect(got).toContain("i1");
      expect(got.length).toBe(2);
    }
    await h.run("b1", "b2", "i1");
    expect(h.runner.calls.every((c) => c.batch <= 2)).toBe(true);
    expect(h.tokens("i1")).toEqual(referenceGreedy(prompt(3), 6));
    expect(h.tokens("b1")).toEqual(referenceGreedy(prompt(1), 24));
    expect(h.tokens("b2")).toEqual(referenceGreedy(prompt(2), 24));
    expect(h.finish("b1")).toMatchObject({ reason: "length", outputTokens: 24 });
  });

  test("queued sequences leave lane by lane: priority, then default, then flex and batch in arrival order", async () => {
    const h = lanes(1);
    h.add("b1", "batch", 2);
    h.add("f1", "flex", 2);
    h.add("d1", undefined, 2);
    h.add("p1", "priority", 2);
    h.add("d2", "default", 2);
    await h.run("b1", "f1", "d1", "p1", "d2");
    const order = ["b1", "f1", "d1", "p1", "d2"].sort((a, b) => h.firstStep(a) - h.firstStep(b));
    expect(order).toEqual(["p1", "d1", "d2", "b1", "f1"]);
  });

  test("while an interactive prompt is prefilled, the step decodes only interactive rows", async () => {
    const h = lanes(4);
    h.add("b1", "batch", 30, 1);
    h.add("b2", "batch", 30, 2);
    h.add("i1", undefined, 30, 3);
    // i1 is prefilled alone first, then b1, then b2 (one background prompt a pass beside interactive work); then all three decode.
    for (let i = 0; i < 4; i++) await h.step();
    expect(h.engine.lastStep.decodeRows).toBe(3);
    h.add("i2", undefined, 4, 4);
    expect((await h.step()).sort()).toEqual(["i1", "i2"]);
    expect(h.engine.lastStep).toMatchObject({ decodeRows: 1, prefillTokens: 6 });
    // Rows are free: the background rows come back at once, beside both interactive ones.
    expect((await h.step()).sort()).toEqual(["b1", "b2", "i1", "i2"]);
    await h.run("b1", "b2", "i1", "i2");
    for (const [id, seed, n] of [["b1", 1, 30], ["b2", 2, 30], ["i1", 3, 30], ["i2", 4, 4]] as const) expect(h.tokens(id)).toEqual(referenceGreedy(prompt(seed), n));
  });

  test("a paused row resumes before new background work, and a cancelled paused row ends cancelled", async () => {
    const h = lanes(1);
    h.add("b1", "batch", 12, 1);
    h.add("b9", "flex", 12, 9);
    await h.step();
    await h.step();
    h.add("i1", undefined, 3, 3);
    h.add("b2", "batch", 4, 2);
    await h.run("b1", "i1", "b9", "b2");
    // b1 was preempted for i1, and went back when i1 ended, before b9 (queued earlier) could start in the freed row.
    const b1Done = h.reports.findIndex((r) => r.finished.some((f) => f.seqId === "b1"));
    expect(h.firstStep("i1")).toBeLessThan(b1Done);
    expect(b1Done).toBeLessThanOrEqual(h.firstStep("b9"));
    expect(h.firstStep("b9")).toBeLessThan(h.firstStep("b2"));
    expect(h.tokens("b1")).toEqual(referenceGreedy(prompt(1), 12));

    const c = lanes(1);
    c.add("b1", "batch", 50, 1);
    await c.step();
    await c.step();
    c.add("i1", undefined, 20, 3);
    // What the worker's loop reads to gather interactive arrivals beside background work (inference-worker.ts).
    expect(c.engine.counts()).toMatchObject({ interactiveQueued: 1, background: true });
    await c.step();
    c.engine.cancel("b1");
    await c.run("i1", "b1");
    expect(c.finish("b1")).toMatchObject({ reason: "cancelled", outputTokens: 2 });
    expect(c.engine.counts()).toEqual({ active: 0, queued: 0, interactiveQueued: 0, background: false });
  });

  test("background prompts take half the step's prefill budget with no interactive work near, a quarter (at least 32 tokens) and one prompt a pass beside it", async () => {
    const h = lanes(8, 128);
    for (let i = 0; i < 8; i++) h.add(`b${i}`, "batch", 40, 10 + i);
    await h.step();
    // Ten 6-token prompts would fit in 64 tokens: all eight go in one pass.
    expect(h.engine.lastStep.prefillTokens).toBe(48);
    const c = lanes(8, 128);
    c.add("i1", undefined, 30, 3);
    await c.step();
    for (let i = 0; i < 3; i++) c.add(`b${i}`, "batch", 4, 10 + i);
    const prefilled: number[] = [];
    for (let i = 0; i < 3; i++) {
      await c.step();
      prefilled.push(c.engine.lastStep.prefillTokens);
    }
    expect(prefilled).toEqual([6, 6, 6]);
    // A long background prompt goes in chunks of the quarter beside interactive work.
    const long = Array.from({ length: 40 }, (_, i) => (i * 5) % 60 + 1);
    const d = lanes(2, 64);
    d.add("i1", undefined, 12, 3);
    await d.step();
    d.engine.add("long", long, greedyParams(3), undefined, undefined, "flex");
    await d.run("long", "i1");
    expect(d.steps.map((st) => st.prefillTokens).filter((n) => n > 0)).toEqual([32, 8]);
    expect(d.tokens("long")).toEqual(referenceGreedy(long, 3));
  });

  test("within the grace after interactive work ends, new background prompts wait; past it they start", async () => {
    const h = lanes(4);
    h.add("i1", undefined, 2, 3);
    await h.run("i1");
    const ended = h.clock.ms;
    h.add("b1", "batch", 2, 1);
    // Nothing else runs: the step waits out the grace (on the engine's clock) instead of spinning, then prefills b1.
    await h.step();
    expect(h.clock.ms - ended).toBeGreaterThanOrEqual(INTERACTIVE_GRACE_MS);
    expect(h.engine.lastStep.prefillTokens).toBe(6);
    // With a background row decoding, a newcomer within the grace waits for the next step past it.
    const c = lanes(4);
    c.add("b1", "batch", 20, 1);
    await c.step();
    c.add("i1", undefined, 2, 3);
    while (!c.finish("i1")) await c.step();
    c.add("b2", "batch", 2, 2);
    await c.step();
    expect(c.engine.lastStep).toMatchObject({ decodeRows: 1, prefillTokens: 0 });
    c.clock.ms += INTERACTIVE_GRACE_MS;
    await c.step();
    expect(c.engine.lastStep.prefillTokens).toBe(6);
    await c.run("b1", "b2");
    expect(c.tokens("b2")).toEqual(referenceGreedy(prompt(2), 2));
  });

  test("an interactive request arriving during a decode pass beside background rows stops that step's background prefill", async () => {
    const h = lanes(4);
    let arrive = false;
    const engine = new Engine(h.runner, {
      maxBatch: 4, tokenBytes, clock: h.clock, emit: (deltas, finished) => h.reports.push({ deltas, finished }),
      takeArrivals: async () => {
        if (arrive) engine.add("i1", prompt(3), greedyParams(2), undefined, undefined, "default");
        arrive = false;
      },
    });
    engine.add("b1", prompt(1), greedyParams(20), undefined, undefined, "batch");
    await engine.step();
    engine.add("b2", prompt(2), greedyParams(2), undefined, undefined, "batch");
    arrive = true;
    await engine.step();
    // The step decoded b1, then took i1 (arrived meanwhile) instead of b2.
    expect(engine.lastStep).toMatchObject({ decodeRows: 1, prefillTokens: 6 });
    expect(h.reports.at(-1)!.deltas.map((d) => d.seqId).sort()).toEqual(["b1", "i1"]);
  });

  test("a batch line's finished KV is not kept for a next turn (its prompt's blocks are); an interactive answer's is", async () => {
    const team = { scope: "t", publicTokens: 0 };
    const h = engineHarness(new FakeRunner(), { maxBatch: 2, prefix: new PrefixReuse(new PrefixCache(16, 1 << 22), "m") });
    const first = Array.from({ length: 40 }, (_, i) => (i * 7) % 60 + 1);
    const turn = async (id: string, lane: ServiceTier, prompt: number[]) => {
      h.engine.add(id, prompt, greedyParams(24), undefined, team, lane);
      await h.run(id);
      return [...prompt, ...h.tokens(id), 5, 6];
    };
    // A next turn re-sends the prompt, the answer and more: after a batch line only the prompt's 40 tokens are cached.
    const afterBatch = await turn("b1", "batch", first);
    await turn("next-b", "default", afterBatch);
    expect(h.finish("next-b")!.cachedTokens).toBe(40);
    // After an interactive answer its tokens are cached too: the prompt and every answer token fed back (all but the last).
    const second = first.map((t) => (t % 59) + 1);
    const afterChat = await turn("c1", "default", second);
    await turn("next-c", "default", afterChat);
    expect(h.finish("next-c")!.cachedTokens).toBe(63);
    expect(h.tokens("next-b")).toEqual(referenceGreedy(afterBatch, 24));
  });
});
