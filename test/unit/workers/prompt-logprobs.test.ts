// Scoring a prompt (legacy completions' echo with logprobs) in the engine: every position's logits read from one-row
// chunked passes, the entries in prompt order (the first null), max_tokens 0, the prefix cache never read, rows beside
// it never run with every position kept, and a runner that keeps only the last position refusing.
import { describe, expect, test } from "bun:test";
import type { PromptLogprob } from "../../../src/protocol/text.ts";
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import type { ForwardResult } from "../../../workers/text/model-runner.ts";
import { PrefixCache } from "../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../workers/text/prefix-reuse.ts";
import { PROMPT_LOGIT_CELLS, promptEntries, scoringWidth } from "../../../workers/text/prompt-logprobs.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { engineHarness, tokenBytes } from "./engine-harness.ts";
import { FakeRunner, nextToken, referenceGreedy, VOCAB } from "./fake-runner.ts";

/** The fake model's logits after `history`: 5 on its next token, 4.5 on the one after, −1 elsewhere. */
function fakeLogits(history: number[]): Float32Array {
  const row = new Float32Array(VOCAB).fill(-1);
  const next = nextToken(history);
  row[next] = 5;
  row[(next + 1) % VOCAB] = 4.5;
  return row;
}

const logSoftmax = (row: Float32Array, id: number) => row[id]! - Math.log(row.reduce((s, v) => s + Math.exp(v), 0));

/** The fake model that also returns every position's logits of a one-row pass that asks (its history read from the cache). */
class ScoringRunner extends FakeRunner {
  readonly allPositions = true;
  readonly scoringPasses: { batch: number; seqLen: number }[] = [];

  override async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const out = await super.forward(inputs, past);
    if (!inputs.allLogits) return out;
    this.scoringPasses.push({ batch: inputs.batch, seqLen: inputs.seqLen });
    const key = out.present[0]!.data;
    const history = Array.from({ length: inputs.pastLen + inputs.seqLen }, (_, c) => key[c * 2]!);
    const positions = new Float32Array(inputs.seqLen * VOCAB);
    for (let j = 0; j < inputs.seqLen; j++) positions.set(fakeLogits(history.slice(0, inputs.pastLen + j + 1)), j * VOCAB);
    return { ...out, positions };
  }
}

const prompt = [3, 17, 40, 8, 8, 21, 60, 2, 33, 11, 5, 19];
const entriesOf = (reports: ReturnType<typeof engineHarness>["reports"], id: string): PromptLogprob[] =>
  reports.flatMap((r) => r.deltas.filter((d) => d.seqId === id).flatMap((d) => d.promptLogprobs ?? []));

describe("prompt scoring in the engine", () => {
  test("entries in prompt order across chunks, the first null, each the log-softmax of the position before", async () => {
    const h = engineHarness(new ScoringRunner(), { budget: 4 });
    h.engine.add("s", prompt, greedyParams(3, { promptLogprobs: 2 }));
    await h.run("s");
    const entries = entriesOf(h.reports, "s");
    expect(entries.map((e) => e.token)).toEqual(prompt);
    expect([entries[0]!.logprob, entries[0]!.top]).toEqual([null, null]);
    for (let k = 1; k < prompt.length; k++) {
      const row = fakeLogits(prompt.slice(0, k));
      const e = entries[k]!;
      expect(e.logprob!).toBeCloseTo(logSoftmax(row, prompt[k]!), 5);
      const best = nextToken(prompt.slice(0, k));
      expect(e.top!.map((t) => t.token)).toEqual([best, (best + 1) % VOCAB]);
      expect(e.top![0]!.logprob).toBeCloseTo(logSoftmax(row, best), 5);
    }
    // One-row passes of at most the budget, then the generated tokens as if nothing had been scored.
    expect(h.runner.scoringPasses).toEqual([{ batch: 1, seqLen: 4 }, { batch: 1, seqLen: 4 }, { batch: 1, seqLen: 4 }]);
    expect(h.tokens("s")).toEqual(referenceGreedy(prompt, 3));
  });

  test("max_tokens 0: the prompt is scored, nothing generated, the finish a length one", async () => {
    const h = engineHarness(new ScoringRunner());
    h.engine.add("s", prompt, greedyParams(0, { promptLogprobs: 0 }));
    await h.run("s");
    expect(entriesOf(h.reports, "s")).toHaveLength(prompt.length);
    expect(h.finish("s")).toMatchObject({ reason: "length", promptTokens: prompt.length, outputTokens: 0 });
    expect(h.tokens("s")).toEqual([]);
  });

  test("rows beside it are prefilled in their own passes, never with every position kept", async () => {
    const h = engineHarness(new ScoringRunner(), { budget: 64 });
    const others = { a: [1, 2, 3, 4, 5], b: [9, 9, 7] };
    h.engine.add("a", others.a, greedyParams(4));
    h.engine.add("s", prompt, greedyParams(4, { promptLogprobs: 1 }));
    h.engine.add("b", others.b, greedyParams(4));
    await h.run("a", "s", "b");
    expect(h.runner.scoringPasses).toEqual([{ batch: 1, seqLen: prompt.length }]);
    expect([h.tokens("a"), h.tokens("b"), h.tokens("s")]).toEqual([referenceGreedy(others.a, 4), referenceGreedy(others.b, 4), referenceGreedy(prompt, 4)]);
    expect([entriesOf(h.reports, "a"), entriesOf(h.reports, "b")]).toEqual([[], []]);
  });

  test("the prefix cache is never read for it (a cached prefix has no logits), but what it computed is stored", async () => {
    const team = { scope: "t", publicTokens: 0 };
    const long = Array.from({ length: 40 }, (_, i) => (i * 7) % VOCAB);
    const h = engineHarness(new ScoringRunner(), { prefix: new PrefixReuse(new PrefixCache(16, 1 << 20), "m") });
    h.engine.add("s1", long, greedyParams(1, { promptLogprobs: 0 }), undefined, team);
    await h.run("s1");
    // What the scored prompt computed serves a plain prompt that shares it...
    const other = [...long.slice(0, 35), 1, 2];
    h.engine.add("plain", other, greedyParams(2), undefined, team);
    await h.run("plain");
    expect(h.finish("plain")!.cachedTokens).toBeGreaterThanOrEqual(32);
    expect(h.tokens("plain")).toEqual(referenceGreedy(other, 2));
    // ...but the same prompt scored again reads none of it, and is scored whole.
    h.engine.add("s2", long, greedyParams(1, { promptLogprobs: 0 }), undefined, team);
    await h.run("s2");
    expect(h.finish("s2")!.cachedTokens).toBeUndefined();
    expect(entriesOf(h.reports, "s2")).toEqual(entriesOf(h.reports, "s1"));
  });

  test("a runner that keeps only the last position's logits refuses it; the width keeps a chunk's logits bounded", async () => {
    const h = engineHarness(new FakeRunner());
    h.engine.add("s", prompt, greedyParams(2, { promptLogprobs: 1 }));
    await h.run("s");
    expect(h.finish("s")).toMatchObject({ reason: "error", message: expect.stringContaining("cannot score a prompt") });
    expect(scoringWidth(512, 32_000)).toBe(Math.floor(PROMPT_LOGIT_CELLS / 32_000));
    expect([scoringWidth(512, 1000), scoringWidth(8, 1000), scoringWidth(512, PROMPT_LOGIT_CELLS * 2)]).toEqual([512, 8, 1]);
  });

  test("promptEntries: a later chunk yields the tokens after each of its positions, the last position none", () => {
    const rows = new Float32Array(3 * VOCAB);
    for (let j = 0; j < 3; j++) rows.set(fakeLogits(prompt.slice(0, 5 + j)), j * VOCAB);
    const tail = promptEntries(rows, VOCAB, prompt.slice(0, 7), 4, 3, 0, tokenBytes);
    expect(tail.map((e) => e.token)).toEqual(prompt.slice(5, 7));
    expect(tail.every((e) => e.top !== null && e.top.length === 0)).toBe(true);
  });
});
