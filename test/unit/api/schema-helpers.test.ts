// The shared schema pieces: reasoning effort takes exactly the core's list of efforts, and names them when refused;
// an OpenAI completion object opens with the same fields in both formats.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { t } from "elysia";
import { completionHead, EffortSchema } from "../../../src/api/schema-helpers.ts";
import { EFFORTS } from "../../../src/inference/effort.ts";

describe("EffortSchema", () => {
  test("accepts each of the core's efforts and nothing else; the refusal lists them", () => {
    expect(EFFORTS.filter((e) => Value.Check(EffortSchema, e))).toEqual([...EFFORTS]);
    expect(["extreme", "", "LOW", 1, null].filter((e) => Value.Check(EffortSchema, e))).toEqual([]);
    expect(EffortSchema.error).toBe("reasoning effort must be one of none, minimal, low, medium, high");
  });
});

describe("completionHead", () => {
  const Head = t.Object(completionHead("cmpl-", "text_completion"));
  const head = { id: "cmpl-1", object: "text_completion", created: 1700000000, model: "m", system_fingerprint: "fp" };

  test("the fields in the order clients see them, the id's prefix in its description", () => {
    expect(Object.keys(Head.properties)).toEqual(["id", "object", "created", "model", "system_fingerprint"]);
    expect(Head.properties.id.description).toBe("cmpl-…");
  });

  test("takes its own object type only, and a whole created time", () => {
    expect(Value.Check(Head, head)).toBe(true);
    expect(Value.Check(Head, { ...head, object: "chat.completion" })).toBe(false);
    expect(Value.Check(Head, { ...head, created: 1.5 })).toBe(false);
  });
});
