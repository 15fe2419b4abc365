// Starts the real inference worker on the tiny model and checks the protocol end to end.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { params, WorkerClient } from "./worker-client.ts";

const PROMPTS: Record<string, number[]> = {
  short: [300],
  mid: [400, 17, 1000, 5, 77, 1500, 90],
  long: Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 2000),
  other: [12, 13, 14, 15, 16, 900, 901, 902, 1200, 7, 8],
};

let dir = "";
let w: WorkerClient;

beforeAll(async () => {
  dir = await tinyModelDir();
  w = new WorkerClient();
  const loaded = await w.load(dir, 16);
  expect(loaded.type).toBe("loaded");
});

afterAll(async () => {
  await w.shutdown();
});

describe("inference worker", () => {
  test("answers pings with its memory and load", async () => {
    const pong = await w.ping();
    expect(pong.nonce).toBe(7);
    expect(pong.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect([pong.active, pong.queued]).toEqual([0, 0]);
  });

  test("greedy output is the same alone and inside a busy batch of other lengths", async () => {
    const alone = await w.add("alone", PROMPTS.mid!, params(24));
    expect(alone.finish).toEqual({ seqId: "alone", reason: "length", promptTokens: 7, outputTokens: 24 });
    expect(alone.text.length).toBeGreaterThan(0);
    // Two neighbours leave early (rows compacted around it), one outlives it.
    const others = (["short", "long", "other"] as const).map((k, i) => w.add(`busy-${k}`, PROMPTS[k]!, params([5, 11, 40][i]!)));
    const inBatch = w.add("in-batch", PROMPTS.mid!, params(24));
    const [mine] = await Promise.all([inBatch, ...others]);
    expect(mine.text).toBe(alone.text);
    expect(mine.finish.outputTokens).toBe(24);
    // It really shared steps with the others.
    expect(w.steps.some((s) => s.deltas.length === 4 && s.deltas.some((d) => d.seqId === "in-batch"))).toBe(true);
  });

  test("a sequence added mid-batch produces tokens before the running one finishes", async () => {
    const long = w.add("runner", PROMPTS.long!, params(400));
    await waitFor(() => w.textOf("runner").length > 0, { what: "the runner's first text", intervalMs: 1 });
    const late = await w.add("late", PROMPTS.short!, params(5));
    expect(late.finish.reason).toBe("length");
    const runner = await long;
    const lateEnd = w.steps.findIndex((s) => s.finished.some((f) => f.seqId === "late"));
    const runnerEnd = w.steps.findIndex((s) => s.finished.some((f) => f.seqId === "runner"));
    expect(lateEnd).toBeLessThan(runnerEnd);
    expect(runner.finish.outputTokens).toBe(400);
  });

  test("stop sequences end the text before the first match", async () => {
    const ref = await w.add("ref", PROMPTS.other!, params(30));
    const chars = [...ref.text];
    const stop = chars.slice(8, 11).join("");
    const expected = ref.text.slice(0, ref.text.indexOf(stop));
    const r = await w.add("stopped", PROMPTS.other!, params(30, { stop: ["\u0000never", stop] }));
    expect(r.finish.reason).toBe("stop");
    expect(r.finish.stopSequence).toBe(stop);
    expect(r.text).toBe(expected);
    expect(r.finish.outputTokens).toBeLessThan(30);
  });

  test("stop token ids end a sequence with reason stop and no text", async () => {
    const every = Array.from({ length: 2048 }, (_, i) => i);
    const r = await w.add("stop-id", PROMPTS.short!, params(10, { stopTokenIds: every }));
    expect(r.finish).toEqual({ seqId: "stop-id", reason: "stop", promptTokens: 1, outputTokens: 1 });
    expect(r.text).toBe("");
  });

  test("a malformed add fails alone", async () => {
    const good = w.add("good", PROMPTS.mid!, params(10));
    const empty = w.add("empty", [], params(10));
    const outside = w.add("outside", [1, 5000], params(10));
    const [g, e, o] = await Promise.all([good, empty, outside]);
    expect(e.finish).toMatchObject({ reason: "error", message: "prompt is empty", outputTokens: 0 });
    expect(o.finish).toMatchObject({ reason: "error", promptTokens: 2 });
    expect(g.finish.reason).toBe("length");
    expect(g.finish.outputTokens).toBe(10);
  });

  test("seeded sampling repeats itself", async () => {
    const p = params(20, { temperature: 0.9, topP: 0.95, seed: 42 });
    const a = await w.add("seed-a", PROMPTS.mid!, p);
    const [b] = await Promise.all([w.add("seed-b", PROMPTS.mid!, p), w.add("seed-noise", PROMPTS.long!, params(25, { temperature: 1, seed: 3 }))]);
    expect(b.text).toBe(a.text);
  });
});

describe("a second worker", () => {
  test("maxBatch 1 queues, and cancel frees the slot", async () => {
    const w1 = new WorkerClient();
    try {
      expect((await w1.load(dir, 1)).type).toBe("loaded");
      const first = w1.add("first", PROMPTS.long!, params(3000));
      const second = w1.add("second", PROMPTS.short!, params(4));
      await waitFor(() => w1.textOf("first").length > 0, { what: "the first sequence's first text", intervalMs: 1 });
      const pong = await w1.ping();
      expect([pong.active, pong.queued]).toEqual([1, 1]);
      w1.post({ type: "cancel", seqId: "first" });
      const f = await first;
      expect(f.finish.reason).toBe("cancelled");
      expect(f.finish.outputTokens).toBeLessThan(3000);
      const s = await second;
      expect(s.finish).toMatchObject({ reason: "length", outputTokens: 4 });
    } finally {
      await w1.shutdown();
    }
  });

  test("runs alongside the first one with identical results", async () => {
    const w2 = new WorkerClient();
    try {
      expect((await w2.load(dir, 4)).type).toBe("loaded");
      const [x, y] = await Promise.all([w.add("twin-1", PROMPTS.other!, params(40)), w2.add("twin-2", PROMPTS.other!, params(40))]);
      expect(y.text).toBe(x.text);
    } finally {
      await w2.shutdown();
    }
  });

  test("a missing model folder is a load error, not a crash", async () => {
    const w3 = new WorkerClient();
    try {
      const r = await w3.load("/nonexistent/kiln-model", 4);
      expect(r.type).toBe("load_error");
    } finally {
      await w3.shutdown();
    }
  });
});
