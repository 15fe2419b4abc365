import { describe, expect, test } from "bun:test";
import { StopMatcher } from "../../../workers/text/stop-matcher.ts";

/** Feeds pieces and returns what was emitted plus the matched stop. */
function run(stops: string[], pieces: string[]) {
  const m = new StopMatcher(stops);
  const emitted: string[] = [];
  for (const p of pieces) {
    const r = m.push(p);
    emitted.push(r.emit);
    if (r.stop !== undefined) return { emitted, stop: r.stop, rest: "" };
  }
  return { emitted, stop: undefined, rest: m.flush() };
}

describe("StopMatcher", () => {
  test("passes text through when there are no stops", () => {
    expect(run([], ["ab", "cd"])).toEqual({ emitted: ["ab", "cd"], stop: undefined, rest: "" });
  });

  test("matches a stop split across pieces and emits only what precedes it", () => {
    expect(run(["END"], ["hello E", "N", "D tail"])).toEqual({ emitted: ["hello ", "", ""], stop: "END", rest: "" });
  });

  test("holds back a possible prefix and releases it when it stops matching", () => {
    expect(run(["END"], ["x EN", "Y more"])).toEqual({ emitted: ["x ", "ENY more"], stop: undefined, rest: "" });
  });

  test("releases a held prefix at the end", () => {
    expect(run(["</answer>"], ["done </ans"])).toEqual({ emitted: ["done "], stop: undefined, rest: "</ans" });
  });

  test("the earliest of several stops wins, within one piece", () => {
    expect(run(["bb", "a"], ["xbbya"])).toEqual({ emitted: ["x"], stop: "bb", rest: "" });
  });

  test("a stop inside held-back text overlapping a longer candidate", () => {
    // "ab" could grow into "abc", but "b!" completes first.
    expect(run(["abc", "b!"], ["ab", "!"])).toEqual({ emitted: ["", "a"], stop: "b!", rest: "" });
  });

  test("multi-line and unicode stops", () => {
    expect(run(["\n\n"], ["a\n", "\nb"])).toEqual({ emitted: ["a", ""], stop: "\n\n", rest: "" });
    expect(run(["→"], ["x→y"])).toEqual({ emitted: ["x"], stop: "→", rest: "" });
  });

  test("empty stop strings are ignored", () => {
    expect(run([""], ["abc"])).toEqual({ emitted: ["abc"], stop: undefined, rest: "" });
  });
});
