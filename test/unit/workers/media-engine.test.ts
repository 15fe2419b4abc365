// The engine with media prompts on a fake model whose "features" are token values: admission waits for preprocessing,
// features land on exactly their placeholders (also across prefill chunks), failures end one sequence, and each
// step's batch record counts its media and text rows.
import { describe, expect, test } from "bun:test";
import type { MediaInput, SeqFinish } from "../../../src/protocol/text.ts";
import { Engine } from "../../../workers/text/engine.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { engineHarness, tokenBytes } from "./engine-harness.ts";
import { FakeMediaRunner, fakeImage, IMAGE, substituted } from "./fake-media-runner.ts";
import { FakeRunner, referenceGreedy } from "./fake-runner.ts";

const run16 = (at: number, len: number, pre: number[] = [3, 4]) => [...pre.slice(0, at), ...Array(len).fill(IMAGE), 9, 10];
const harness = (runner = new FakeMediaRunner(), opts: { maxBatch?: number; budget?: number } = {}) => engineHarness(runner, opts);
const greedy = greedyParams;

/** A fake media model whose encoder, once entered (`inEncode`), waits until `open()`: a step held inside its encoders. */
function slowEncoder() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let entered!: () => void;
  const inEncode = new Promise<void>((r) => (entered = r));
  class SlowEncoder extends FakeMediaRunner {
    override async encode(kind: Parameters<FakeMediaRunner["encode"]>[0], prepared: Parameters<FakeMediaRunner["encode"]>[1]) {
      entered();
      await gate;
      return super.encode(kind, prepared);
    }
  }
  return { runner: new SlowEncoder(), inEncode, open };
}

describe("Engine with media", () => {
  test("features stand in for their placeholders: the output is the substituted prompt's", async () => {
    const h = harness();
    const image = fakeImage(2, 6, 1);
    const prompt = run16(2, 6);
    h.engine.add("img", prompt, greedy(6), [image]);
    await h.run("img");
    expect(h.tokens("img")).toEqual(referenceGreedy(substituted(prompt, [image]), 6));
    // The features mattered: with the placeholders themselves the fake model says something else.
    expect(h.tokens("img")).not.toEqual(referenceGreedy(prompt, 6));
    // One prefill pass carried the image's six rows at columns 2..7 of row 0.
    expect(h.runner.placed.filter((p) => p.length > 0)).toEqual([[[0, 2, 6]]]);
  });

  test("a sequence waits for its preprocessing without holding up others; wake says when it is ready", async () => {
    const h = harness();
    let open!: () => void;
    h.runner.gate = new Promise<void>((r) => (open = r));
    const image = fakeImage(1, 4, 2);
    const prompt = [7, ...Array(4).fill(IMAGE), 8];
    h.engine.add("img", prompt, greedy(3), [image]);
    // Only preprocessing is under way: nothing to step.
    expect(h.engine.hasWork()).toBe(false);
    expect(h.engine.counts()).toMatchObject({ active: 0, queued: 1 });
    h.engine.add("txt", [5, 6, 7], greedy(3));
    await h.engine.step();
    expect(h.engine.counts()).toMatchObject({ active: 1, queued: 1 });
    expect(h.wakes()).toBe(0);
    open();
    await waitFor(() => h.wakes(), { what: "a wake" });
    await h.run("img", "txt");
    expect(h.tokens("img")).toEqual(referenceGreedy(substituted(prompt, [image]), 3));
    expect(h.tokens("txt")).toEqual(referenceGreedy([5, 6, 7], 3));
  });

  test("an image row batched with text rows (left padding) gives the same tokens as alone", async () => {
    const image = fakeImage(3, 5, 3);
    const prompt = [1, 2, 3, ...Array(5).fill(IMAGE), 4];
    const alone = harness();
    alone.engine.add("img", prompt, greedy(5), [image]);
    await alone.run("img");
    const mixed = harness();
    mixed.engine.add("txt", [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22], greedy(5));
    mixed.engine.add("img", prompt, greedy(5), [image]);
    mixed.engine.add("short", [30], greedy(5));
    // Ready before the first step, so all three share one left-padded prefill.
    await waitFor(() => mixed.wakes(), { what: "the image to be preprocessed" });
    await mixed.run("img", "txt", "short");
    expect(mixed.runner.calls[0]).toEqual({ batch: 3, seqLen: 12, pastLen: 0 });
    expect(mixed.tokens("img")).toEqual(alone.tokens("img"));
    expect(mixed.tokens("txt")).toEqual(referenceGreedy([11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22], 5));
    // Whatever pass the image was prefilled in, its rows sat right after its own three prompt tokens.
    const pass = mixed.runner.placed.find((p) => p.length > 0)!;
    const width = mixed.runner.calls[mixed.runner.placed.indexOf(pass)]!.seqLen;
    expect(pass).toEqual([[expect.any(Number), width - prompt.length + 3, 5]]);
  });

  test("a chunked prefill that cuts an image run (and a second one inside one chunk) equals the unchunked run", async () => {
    const media: MediaInput[] = [fakeImage(2, 7, 4), fakeImage(11, 2, 5)];
    const prompt = [1, 2, ...Array(7).fill(IMAGE), 3, 4, IMAGE, IMAGE, 5];
    const whole = harness();
    whole.engine.add("img", prompt, greedy(6), media);
    await whole.run("img");
    const chunked = harness(new FakeMediaRunner(), { budget: 4 });
    chunked.engine.add("img", prompt, greedy(6), media);
    await chunked.run("img");
    expect(chunked.tokens("img")).toEqual(whole.tokens("img"));
    expect(whole.tokens("img")).toEqual(referenceGreedy(substituted(prompt, media), 6));
    // Chunks [0,4) [4,8) [8,12) [12,14): the first image's rows 0-1, 2-5, 6; the second's first row, then its last.
    expect(chunked.runner.placed.slice(0, 4)).toEqual([[[0, 2, 2]], [[0, 0, 4]], [[0, 0, 1], [0, 3, 1]], [[0, 0, 1]]]);
  });

  test("a failed preprocessing, an encoder failure and a feature-count mismatch each end only their own sequence", async () => {
    const runner = new FakeMediaRunner();
    runner.failWidth = { width: 3, own: false };
    runner.failTokens = 4;
    runner.shortTokens = 5;
    const h = harness(runner);
    const at = (n: number) => [1, ...Array(n).fill(IMAGE), 2];
    h.engine.add("bad-pre", at(3), greedy(3), [fakeImage(1, 3, 1)]);
    h.engine.add("bad-enc", at(4), greedy(3), [fakeImage(1, 4, 1)]);
    h.engine.add("short", at(5), greedy(3), [fakeImage(1, 5, 1)]);
    h.engine.add("good", at(6), greedy(3), [fakeImage(1, 6, 1)]);
    h.engine.add("txt", [5, 6], greedy(3));
    await h.run("bad-pre", "bad-enc", "short", "good", "txt");
    // Messages are short and carry no library or runtime text.
    expect(h.finish("bad-pre")).toEqual({ seqId: "bad-pre", reason: "error", promptTokens: 5, outputTokens: 0, message: "media 0 (image): could not be preprocessed" });
    expect(h.finish("bad-enc")).toMatchObject({ reason: "error", outputTokens: 0, message: "media 0 (image): the image encoder failed" });
    expect(h.finish("short")).toMatchObject({ reason: "error", message: "media 0 (image): 4 feature rows for 5 placeholder tokens" });
    expect(h.finish("good")).toMatchObject({ reason: "length", outputTokens: 3 });
    expect(h.tokens("good")).toEqual(referenceGreedy(substituted(at(6), [fakeImage(1, 6, 1)]), 3));
    expect(h.tokens("txt")).toEqual(referenceGreedy([5, 6], 3));
  });

  test("our own preprocessing message names the input; the engine keeps serving", async () => {
    const runner = new FakeMediaRunner();
    runner.failWidth = { width: 2, own: true };
    const h = harness(runner);
    h.engine.add("wide", [1, IMAGE, 7, IMAGE, IMAGE, 2], greedy(2), [fakeImage(1, 1, 1), fakeImage(3, 2, 1)]);
    await h.run("wide");
    expect(h.finish("wide")?.message).toBe("media 1 (image): too wide");
    h.engine.add("after", [1, 2], greedy(2));
    await h.run("after");
    expect(h.tokens("after")).toEqual(referenceGreedy([1, 2], 2));
  });

  test("the batch record counts each decode pass's rows with and without media", async () => {
    const h = harness();
    const image = fakeImage(1, 3, 6);
    h.engine.add("img", [1, IMAGE, IMAGE, IMAGE, 2], greedy(8), [image]);
    h.engine.add("txt", [5, 6, 7], greedy(4));
    await h.run("img", "txt");
    const batches = h.reports.map((r) => r.batch ?? null);
    // The first step only prefilled (no decode pass, no record); later ones name exactly who shared the pass.
    expect(batches[0]).toBeNull();
    expect(batches).toContainEqual({ media: 1, text: 1 });
    expect(batches.at(-1)).toEqual({ media: 1, text: 0 });
    expect(h.engine.lastStep).toMatchObject({ decodeRows: 1, mediaRows: 1 });
  });

  test("a sequence cancelled while preprocessing ends once, as cancelled", async () => {
    const h = harness();
    let open!: () => void;
    h.runner.gate = new Promise<void>((r) => (open = r));
    h.engine.add("img", [1, IMAGE, 2], greedy(2), [fakeImage(1, 1, 1)]);
    h.engine.cancel("img");
    await h.engine.step();
    open();
    await waitFor(() => h.runner.prepared, { what: "the preprocessing to end" });
    while (h.engine.hasWork()) await h.engine.step();
    expect(h.reports.flatMap((r) => r.finished)).toEqual([{ seqId: "img", reason: "cancelled", promptTokens: 3, outputTokens: 0 }]);
  });

  test("a cancel that arrives while a newcomer's encoder runs (before it joins the batch) is honoured", async () => {
    const { runner, inEncode, open } = slowEncoder();
    const h = harness(runner);
    h.engine.add("img", [7, ...Array(4).fill(IMAGE), 8], greedy(50), [fakeImage(1, 4, 2)]);
    await waitFor(() => h.engine.hasWork(), { what: "the image preprocessed" });
    const step = h.engine.step();
    await inEncode;
    h.engine.cancel("img");
    open();
    await step;
    await h.run("img");
    // It sampled its first token in the pass it was admitted to, then left at the next step boundary.
    expect(h.reports.flatMap((r) => r.finished).map((f) => [f.seqId, f.reason, f.outputTokens])).toEqual([["img", "cancelled", 1]]);
  });

  test("a cancel for a long prompt whose last chunk was just prefilled, arriving during a newcomer's encoder, is honoured", async () => {
    const { runner, inEncode, open } = slowEncoder();
    const h = harness(runner, { budget: 8, maxBatch: 4 });
    h.engine.add("long", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], greedy(200));
    h.engine.add("img", [7, ...Array(4).fill(IMAGE), 8], greedy(200), [fakeImage(1, 4, 2)]);
    await waitFor(() => h.engine.preparing(), { what: "img preprocessed", until: (n) => n === 0 });
    await h.engine.step(); // the first 8 tokens of "long"; no budget left for img
    const step = h.engine.step(); // the last chunk of "long" completes; img is admitted and its encoder runs
    await inEncode;
    h.engine.cancel("long");
    open();
    await step;
    await h.engine.step();
    expect(h.reports.flatMap((r) => r.finished).map((f) => [f.seqId, f.reason])).toEqual([["long", "cancelled"]]);
  });

  test("media adds that cannot run fail alone at once", async () => {
    const text = harness(new FakeMediaRunner());
    text.engine.add("wrong-token", [1, 2, 3], greedy(2), [fakeImage(1, 1, 1)]);
    const plain = new Engine(new FakeRunner(), { maxBatch: 2, tokenBytes, emit: (_d, f) => finished.push(...f) });
    const finished: SeqFinish[] = [];
    plain.add("no-media-model", [1, IMAGE, 2], greedy(2), [fakeImage(1, 1, 1)]);
    await plain.step();
    await text.engine.step();
    expect(finished[0]?.message).toBe("this model takes no image or audio input");
    expect(text.finish("wrong-token")?.message).toBe("media 0 (image): prompt position 1 is not the image token");
  });
});
