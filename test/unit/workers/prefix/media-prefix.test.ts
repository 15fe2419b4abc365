// Media rows in the prefix cache hash by their content: a prompt's image prefix is reused only for the same bytes, and
// the output is always the fake model's answer for the substituted prompt (which wrong reuse would change).
import { describe, expect, test } from "bun:test";
import { PrefixCache } from "../../../../workers/text/prefix-cache.ts";
import { PrefixReuse } from "../../../../workers/text/prefix-reuse.ts";
import { greedyParams } from "../../../helpers/sampling.ts";
import { engineHarness } from "../engine-harness.ts";
import { FakeMediaRunner, fakeImage, IMAGE, substituted } from "../fake-media-runner.ts";
import { referenceGreedy } from "../fake-runner.ts";

const scope = { scope: "team:1", publicTokens: 0 };
const text = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 5 + seed) % 60);

describe("prefix cache with media", () => {
  test("the same image bytes reuse the image's rows; other bytes at the same place stop the hit before them", async () => {
    const h = engineHarness(new FakeMediaRunner(), { prefix: new PrefixReuse(new PrefixCache(16, 1 << 24), "fake") });
    const prompt = [...text(20, 1), ...Array(24).fill(IMAGE), ...text(10, 2)];
    const same = fakeImage(20, 24, 1);
    h.engine.add("first", prompt, greedyParams(4), [fakeImage(20, 24, 1)], scope);
    await h.run("first");
    h.engine.add("same", prompt, greedyParams(4), [same], scope);
    await h.run("same");
    expect(h.finish("same")?.cachedTokens).toBe(prompt.length - 1);
    expect(h.tokens("same")).toEqual(referenceGreedy(substituted(prompt, [same]), 4));
    const other = fakeImage(20, 24, 2);
    h.engine.add("other", prompt, greedyParams(4), [other], scope);
    await h.run("other");
    // The 20 text positions before the image are the only shared ones (16 in a whole block, 4 from the partial run).
    expect(h.finish("other")?.cachedTokens).toBe(20);
    expect(h.tokens("other")).toEqual(referenceGreedy(substituted(prompt, [other]), 4));
  });
});
