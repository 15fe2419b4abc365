// The embedding worker's batching over a scripted encoder: rows of several jobs share one run, a job larger than the
// token budget spans runs and is answered once, a cancelled job is dropped, and a failed run fails only its own jobs.
import { describe, expect, test } from "bun:test";
import type { EmbedFromWorker } from "../../../../src/protocol/embed.ts";
import { EmbedEngine } from "../../../../workers/embedding/embed-engine.ts";
import type { EncoderRunner } from "../../../../workers/embedding/encoder-runner.ts";

/** An encoder whose token row t of width 2 is [first id, t]: mean pooling gives [first id, (len − 1) / 2]. */
function scriptedRunner(failOn?: number): EncoderRunner & { runs: number[][][] } {
  const runs: number[][][] = [];
  return {
    runs,
    async run(rows) {
      runs.push(rows.map((r) => [...r]));
      if (rows.some((r) => r[0] === failOn)) throw new Error("scripted failure");
      const seq = Math.max(...rows.map((r) => r.length));
      const hidden = new Float32Array(rows.length * seq * 2);
      rows.forEach((r, b) => r.forEach((_, t) => hidden.set([r[0]!, t], (b * seq + t) * 2)));
      return { hidden, seq, lengths: rows.map((r) => r.length) };
    },
    dispose: async () => {},
  };
}

function engine(runner: EncoderRunner, maxBatchTokens = 100) {
  const out: EmbedFromWorker[] = [];
  const e = new EmbedEngine(runner, { pooling: "mean", normalize: false, dimensions: 2, maxBatchTokens, emit: (m) => out.push(m) });
  return { e, out };
}

describe("EmbedEngine", () => {
  test("two clients' jobs share one run; each is answered with its own vectors in input order", async () => {
    const runner = scriptedRunner();
    const { e, out } = engine(runner);
    e.add("a", [[3, 1, 1], [4]]);
    e.add("b", [[7, 1]]);
    await e.step();
    expect(runner.runs).toEqual([[[3, 1, 1], [4], [7, 1]]]);
    expect(out.map((m) => [m.type, m.jobId, m.type === "embedded" ? [...m.vectors] : null])).toEqual([
      ["embedded", "a", [3, 1, 4, 0]],
      ["embedded", "b", [7, 0.5]],
    ]);
    expect(e.hasWork()).toBe(false);
  });

  test("a job past the token budget spans runs and is answered once, after its last row", async () => {
    const runner = scriptedRunner();
    const { e, out } = engine(runner, 4);
    e.add("a", [[1, 1], [2, 2], [3, 3]]);
    await e.step();
    expect(out).toEqual([]);
    await e.step();
    expect(runner.runs.map((r) => r.length)).toEqual([2, 1]);
    expect(out.map((m) => (m.type === "embedded" ? [...m.vectors] : m.type))).toEqual([[1, 0.5, 2, 0.5, 3, 0.5]]);
  });

  test("a cancelled job is dropped and told; a failed run fails only the jobs it carried", async () => {
    const runner = scriptedRunner(9);
    const { e, out } = engine(runner, 1);
    e.add("bad", [[9]]);
    e.add("gone", [[5]]);
    e.add("later", [[6]]);
    e.cancel("gone");
    await e.step();
    await e.step();
    expect(out.map((m) => [m.type, m.jobId])).toEqual([["embed_cancelled", "gone"], ["embed_failed", "bad"], ["embedded", "later"]]);
  });
});
