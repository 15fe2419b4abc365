// How a model's rows share a batch on the CPU: left-padded (exact), right-padded (a GroupQueryAttention format), or one.
import { describe, expect, test } from "bun:test";
import { batchLabel, rightPaddedOnCpu } from "../../../src/models/padding.ts";

const model = (batching: { maxBatch: number; leftPadding: "exact" | "unsafe"; rightPadded?: string[] }, placement?: { device: "cpu" | "webgpu"; dtype: string; reason: string }) => ({
  batching,
  defaultDtype: "q4",
  ...(placement ? { placement } : {}),
});

describe("rightPaddedOnCpu and batchLabel", () => {
  test("exact left padding wins; a GroupQueryAttention default format is right-padded; any other unsafe folder runs one row", () => {
    expect([rightPaddedOnCpu(model({ maxBatch: 16, leftPadding: "exact" })), batchLabel(model({ maxBatch: 16, leftPadding: "exact" }))]).toEqual([false, "16"]);
    const gqa = model({ maxBatch: 8, leftPadding: "unsafe", rightPadded: ["q4"] });
    expect([rightPaddedOnCpu(gqa), batchLabel(gqa)]).toEqual([true, "8 (right-padded)"]);
    expect([rightPaddedOnCpu(model({ maxBatch: 8, leftPadding: "unsafe" })), batchLabel(model({ maxBatch: 8, leftPadding: "unsafe" }))]).toEqual([false, "1 (unsafe padding)"]);
  });

  test("the format placed decides, not the folder's default; on the webgpu device the worker pads its own way", () => {
    const batching = { maxBatch: 8, leftPadding: "unsafe" as const, rightPadded: ["q4"] };
    expect(rightPaddedOnCpu(model(batching, { device: "cpu", dtype: "fp32", reason: "" }))).toBe(false);
    expect(rightPaddedOnCpu(model(batching, { device: "cpu", dtype: "q4", reason: "" }))).toBe(true);
    expect(rightPaddedOnCpu(model(batching, { device: "webgpu", dtype: "q4", reason: "" }))).toBe(false);
  });
});
