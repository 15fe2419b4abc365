// The shared schema pieces: reasoning effort takes exactly the core's list of efforts, and names them when refused.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { EffortSchema } from "../../../src/api/schema-helpers.ts";
import { EFFORTS } from "../../../src/inference/effort.ts";

describe("EffortSchema", () => {
  test("accepts each of the core's efforts and nothing else; the refusal lists them", () => {
    expect(EFFORTS.filter((e) => Value.Check(EffortSchema, e))).toEqual([...EFFORTS]);
    expect(["extreme", "", "LOW", 1, null].filter((e) => Value.Check(EffortSchema, e))).toEqual([]);
    expect(EffortSchema.error).toBe("reasoning effort must be one of none, minimal, low, medium, high");
  });
});
