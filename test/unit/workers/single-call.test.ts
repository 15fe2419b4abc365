// At most one tool call per turn, in the worker: the guard's rule token by token, and the engine over a scripted
// model whose logits write two calls, where each row of one batch keeps its own setting.
import { describe, expect, test } from "bun:test";
import type { SingleCall } from "../../../src/protocol/text.ts";
import type { StepInputs } from "../../../workers/text/batch-inputs.ts";
import type { BatchKv } from "../../../workers/text/kv-cache.ts";
import type { ForwardResult } from "../../../workers/text/model-runner.ts";
import { SingleCallGuard } from "../../../workers/text/single-call.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { engineHarness } from "./engine-harness.ts";
import { FakeRunner, VOCAB } from "./fake-runner.ts";

const OPEN = 50;
const CLOSE = 51;
const THINK_CLOSE = 52;
const EOS = 63;
const TEXT = 10;
const ARGS = 11;
/** What the model falls back to when its first choice is banned. */
const OTHER = 12;

describe("SingleCallGuard", () => {
  const rule: SingleCall = { openId: OPEN, closeId: CLOSE };
  const banned = (g: SingleCallGuard) => {
    const logits = new Float32Array(VOCAB).fill(1);
    g.restrict(logits);
    return [...logits.keys()].filter((i) => logits[i] === -Infinity);
  };

  test("nothing is banned before a call; the open bans a second one; the close ends the turn", () => {
    const g = new SingleCallGuard(rule);
    expect(g.accept(CLOSE)).toBe(false);
    expect(banned(g)).toEqual([]);
    expect(g.accept(TEXT)).toBe(false);
    expect(g.accept(OPEN)).toBe(false);
    expect(banned(g)).toEqual([OPEN]);
    expect(g.accept(ARGS)).toBe(false);
    expect(g.accept(CLOSE)).toBe(true);
  });

  test("markers inside the thinking block the sequence starts in open and close nothing", () => {
    const g = new SingleCallGuard({ ...rule, startAfter: THINK_CLOSE });
    expect(g.accept(OPEN)).toBe(false);
    expect(g.accept(CLOSE)).toBe(false);
    expect(banned(g)).toEqual([]);
    expect(g.accept(THINK_CLOSE)).toBe(false);
    g.accept(OPEN);
    expect(g.accept(CLOSE)).toBe(true);
  });

  test("a call the prompt opened is the one call; a marker of several tokens (no id) is left to the parser", () => {
    const opened = new SingleCallGuard({ ...rule, opened: true });
    expect(banned(opened)).toEqual([OPEN]);
    expect(opened.accept(CLOSE)).toBe(true);
    const noClose = new SingleCallGuard({ openId: OPEN });
    noClose.accept(OPEN);
    expect(noClose.accept(CLOSE)).toBe(false);
    expect(banned(noClose)).toEqual([OPEN]);
    const noOpen = new SingleCallGuard({ closeId: CLOSE });
    expect(noOpen.accept(OPEN)).toBe(false);
    expect(noOpen.accept(CLOSE)).toBe(false);
    expect(banned(noOpen)).toEqual([]);
  });
});

/** Each prompt's planned output (by its first token): the model's first choice at each step, OTHER second. */
const PLANS: Record<number, number[]> = {
  1: [TEXT, OPEN, ARGS, CLOSE, TEXT, OPEN, ARGS, ARGS, CLOSE, EOS],
  // Thinks first, writing both markers inside the block, then calls twice.
  2: [TEXT, OPEN, CLOSE, THINK_CLOSE, OPEN, ARGS, CLOSE, OPEN, ARGS, CLOSE, EOS],
};
const PROMPT = 3;

/** The fake model with its logits replaced by a plan: the row's history (read back from its KV) says where it is. */
class ScriptedRunner extends FakeRunner {
  override async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    const r = await super.forward(inputs, past);
    const [batch, , total] = r.present[0]!.dims;
    const kv = r.present[0]!.data;
    for (let b = 0; b < batch; b++) {
      const history: number[] = [];
      for (let c = 0; c < total; c++) if (!Number.isNaN(kv[(b * total + c) * 2]!)) history.push(kv[(b * total + c) * 2]!);
      const row = r.logits.subarray(b * VOCAB, (b + 1) * VOCAB).fill(-1);
      row[PLANS[history[0]!]![history.length - PROMPT] ?? EOS] = 5;
      row[OTHER] = 4;
    }
    return r;
  }
}

describe("the engine with parallel tool calls off", () => {
  test("rows of one batch keep their own setting: two calls, one call and the end, or the second open banned", async () => {
    const h = engineHarness(new ScriptedRunner(), { maxBatch: 4 });
    const params = (singleCall?: SingleCall) => greedyParams(40, { stopTokenIds: [EOS], ...(singleCall ? { singleCall } : {}) });
    h.engine.add("parallel", [1, 0, 0], params());
    h.engine.add("one", [1, 0, 0], params({ openId: OPEN, closeId: CLOSE }));
    // A close marker of several tokens: the worker cannot see it, so it bans the open marker after the first call.
    h.engine.add("ban", [1, 0, 0], params({ openId: OPEN }));
    await h.run("parallel", "one", "ban");
    expect(h.tokens("parallel")).toEqual([TEXT, OPEN, ARGS, CLOSE, TEXT, OPEN, ARGS, ARGS, CLOSE]);
    expect(h.tokens("one")).toEqual([TEXT, OPEN, ARGS, CLOSE]);
    expect(h.finish("one")).toMatchObject({ reason: "stop", outputTokens: 4 });
    expect(h.tokens("ban")).toEqual([TEXT, OPEN, ARGS, CLOSE, TEXT, OTHER, ARGS, ARGS, CLOSE]);
  });

  test("after a thinking block: its markers count for nothing, the first call after it ends the turn", async () => {
    const h = engineHarness(new ScriptedRunner());
    h.engine.add("think", [2, 0, 0], greedyParams(40, { stopTokenIds: [EOS], singleCall: { openId: OPEN, closeId: CLOSE, startAfter: THINK_CLOSE } }));
    await h.run("think");
    expect(h.tokens("think")).toEqual([TEXT, OPEN, CLOSE, THINK_CLOSE, OPEN, ARGS, CLOSE]);
    expect(h.finish("think")!.reason).toBe("stop");
  });

  test("a call the prompt opened: its close ends the turn, even with ignore_eos (no end id)", async () => {
    const h = engineHarness(new ScriptedRunner());
    h.engine.add("forced", [1, 0, 0], greedyParams(40, { singleCall: { openId: OPEN, closeId: CLOSE, opened: true } }));
    await h.run("forced");
    // The prompt opened the call, so the plan's own OPEN is banned and OTHER written in its place.
    expect(h.tokens("forced")).toEqual([TEXT, OTHER, ARGS, CLOSE]);
    expect(h.finish("forced")!.reason).toBe("stop");
  });
});
