// The int8 embedding table of the quantized CPU graphs: each row within half a step of its values.
import { expect, test } from "bun:test";
import { int8Rows } from "../../../src/modelgen/sinks.ts";
import { tensorRng } from "../../../src/modelgen/rng.ts";

test("each row is its values to within half a step (max|row| / 254), zero rows stay zero", () => {
  const rows = 50, cols = 96;
  const x = new Float32Array(rows * cols);
  tensorRng(5, "emb").fillNormal(x, 0.5);
  x.fill(0, 10 * cols, 11 * cols);
  const scales = new Float32Array(rows);
  const q = int8Rows(x, rows, cols, scales);
  for (let r = 0; r < rows; r++) {
    let amax = 0;
    for (let i = 0; i < cols; i++) amax = Math.max(amax, Math.abs(x[r * cols + i]!));
    for (let i = 0; i < cols; i++) expect(Math.abs(q[r * cols + i]! * scales[r]! - x[r * cols + i]!)).toBeLessThanOrEqual(amax / 254 + 1e-7);
  }
  expect(Array.from(q.subarray(10 * cols, 11 * cols)).every((v) => v === 0)).toBe(true);
});
