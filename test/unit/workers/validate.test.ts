// The engine's refusal of an add, as a pure function: the first reason in a fixed order, or null.
import { describe, expect, test } from "bun:test";
import { addRefusal, type EngineAbilities } from "../../../workers/text/validate.ts";
import { greedyParams } from "../../helpers/sampling.ts";

const model: EngineAbilities = { vocabSize: 100, maxContext: 64, constrainable: false, allPositions: false, mediaTokenIds: undefined };

describe("addRefusal", () => {
  test("a good add passes; a bad id, a repeated one, a bad prompt and what the model cannot do are each named", () => {
    expect(addRefusal("s1", new Set(), [1, 2, 3], greedyParams(4), undefined, model)).toBeNull();
    expect(addRefusal("", new Set(), [1], greedyParams(4), undefined, model)).toBe("seqId must be a non-empty string");
    expect(addRefusal("s1", new Set(["s1"]), [1], greedyParams(4), undefined, model)).toBe("sequence s1 is already running");
    expect(addRefusal("s1", new Set(), [100], greedyParams(4), undefined, model)).toContain("outside the vocabulary");
    const constrained = { ...greedyParams(4), constraint: { spec: { kind: "json_object" }, stopIds: [2] } } as never;
    expect(addRefusal("s1", new Set(), [1], constrained, undefined, model)).toBe("this model's output cannot be constrained");
    expect(addRefusal("s1", new Set(), [1], { ...greedyParams(4), promptLogprobs: 0 }, undefined, model)).toContain("cannot score a prompt");
    expect(addRefusal("s1", new Set(), [1], greedyParams(4), [{ kind: "image" }], model)).toBe("this model takes no image or audio input");
  });
});
