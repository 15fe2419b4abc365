// Effort and thinking budgets: what each effort opens and spends, the cap that leaves a required answer room, and
// the close the worker writes (with a forced call's opening after it).
import { describe, expect, test } from "bun:test";
import { EFFORT_BUDGET, thinkingFor } from "../../../src/inference/effort.ts";
import { resolvePromptFormat } from "../../../src/inference/prompt-format.ts";
import { closeFraming, opensThinking, thinkingClose, thinkingTokens } from "../../../src/inference/thinking.ts";

describe("effort", () => {
  test("low, medium and high open the block with 256, 1024 and 4096 tokens; none and minimal skip it; no effort leaves the template alone", () => {
    expect(thinkingFor(true, "low")).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 256 });
    expect(thinkingFor(true, "medium")).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 1024 });
    expect(thinkingFor(true, "high")).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 4096 });
    expect(thinkingFor(true, "none")).toEqual({ templateOptions: { enable_thinking: false } });
    expect(thinkingFor(true, "minimal")).toEqual({ templateOptions: { enable_thinking: false } });
    expect(thinkingFor(true, null)).toEqual({});
    expect(thinkingFor(false, "high")).toEqual({});
    expect(EFFORT_BUDGET.low).toBeLessThan(EFFORT_BUDGET.medium);
  });
});

describe("thinking budgets", () => {
  test("a free answer keeps the budget asked; a required one leaves itself half the output", () => {
    expect(thinkingTokens(4096, 2048, false)).toBe(4096);
    expect(thinkingTokens(undefined, 2048, false)).toBeUndefined();
    expect(thinkingTokens(4096, 2048, true)).toBe(1024);
    expect(thinkingTokens(256, 2048, true)).toBe(256);
    expect(thinkingTokens(undefined, 601, true)).toBe(300);
  });

  test("the close the worker writes: the template's framing, then what must follow; none for a close of several tokens", () => {
    const format = resolvePromptFormat(undefined, "<think></think>", () => false);
    const ids = (t: string) => t.split(/(<\/think>)/).filter(Boolean).flatMap((p) => (p === "</think>" ? [99] : [...p].map((c) => c.charCodeAt(0))));
    const c = thinkingClose({ format, encodeText: ids }, "<call>");
    expect(c).toEqual({ closeTokenId: 99, forceIds: ids(closeFraming("</think>", "<call>")), framingIds: ids("\n\n<call>") });
    expect(closeFraming("</think>")).toBe("\n</think>\n\n");
    expect(thinkingClose({ format, encodeText: (t) => [...t].map((ch) => ch.charCodeAt(0)) })).toBeNull();
    expect(opensThinking("assistant\n<think>\n", format.thinking)).toBe(true);
    expect(opensThinking("assistant\n", format.thinking)).toBe(false);
  });
});
