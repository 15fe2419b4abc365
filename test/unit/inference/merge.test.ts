import { describe, expect, test } from "bun:test";
import { mergeStreams } from "../../../src/inference/merge.ts";
import { waitFor } from "../../helpers/wait-for.ts";

async function* timed(items: [string, number][]) {
  for (const [v, ms] of items) {
    await Bun.sleep(ms);
    yield v;
  }
}

describe("mergeStreams", () => {
  test("interleaves items as they arrive, tagged with their stream's index, until every stream ends", async () => {
    const out: string[] = [];
    for await (const { index, item } of mergeStreams([timed([["a1", 5], ["a2", 30]]), timed([["b1", 15], ["b2", 1]]), timed([])])) out.push(`${index}:${item}`);
    expect(out).toEqual(["0:a1", "1:b1", "1:b2", "0:a2"]);
  });

  test("stopping early returns every stream still open", async () => {
    let closed = 0;
    async function* endless(tag: string) {
      try {
        for (;;) {
          await Bun.sleep(2);
          yield tag;
        }
      } finally {
        closed++;
      }
    }
    for await (const { item } of mergeStreams([endless("x"), endless("y")])) if (item) break;
    // Each stream closes once its pending item arrives; an endless stream left open never would.
    expect(await waitFor(() => closed, { what: "both streams closed", until: (n) => n === 2 })).toBe(2);
  });
});
