// The engine's lane choices as pure functions: how background prompts are paced around interactive work, and the
// prefill budget each lane gets.
import { describe, expect, test } from "bun:test";
import { backgroundPace, INTERACTIVE_GRACE_MS, keepsFinishedKv, laneBudget } from "../../../workers/text/lane-choice.ts";
import type { Sequence } from "../../../workers/text/sequence.ts";

const seq = (lane: Sequence["lane"]) => ({ lane }) as Sequence;

describe("backgroundPace", () => {
  test("one prompt a pass while interactive work is live, none within the grace after it, the full pace past it", () => {
    expect(backgroundPace(true, 0)).toBe("one");
    expect(backgroundPace(true, 10_000)).toBe("one");
    expect(backgroundPace(false, 0)).toBe("hold");
    expect(backgroundPace(false, INTERACTIVE_GRACE_MS - 1)).toBe("hold");
    expect(backgroundPace(false, INTERACTIVE_GRACE_MS)).toBe("full");
    expect(backgroundPace(false, Infinity)).toBe("full");
  });
});

describe("laneBudget", () => {
  test("interactive work gets the whole budget; background a quarter, or half at the full pace, never under 32", () => {
    for (const lane of [undefined, "default", "priority"] as const) expect(laneBudget(seq(lane), 512, "one")).toBe(512);
    expect(laneBudget(seq("batch"), 512, "one")).toBe(128);
    expect(laneBudget(seq("flex"), 512, "full")).toBe(256);
    expect(laneBudget(seq("batch"), 512)).toBe(128);
    expect(laneBudget(seq("batch"), 64, "one")).toBe(32);
    expect(laneBudget(seq("flex"), 40, "full")).toBe(32);
  });
});

describe("keepsFinishedKv", () => {
  test("every lane but batch keeps a finished sequence's KV for a next turn", () => {
    expect([undefined, "default", "priority", "flex"].map((l) => keepsFinishedKv(l as Sequence["lane"]))).toEqual([true, true, true, true]);
    expect(keepsFinishedKv("batch")).toBe(false);
  });
});
