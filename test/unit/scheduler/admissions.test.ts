import { expect, test } from "bun:test";
import { Admissions } from "../../../src/scheduler/admissions.ts";

test("requests being prepared are counted per model until each one ends, once", () => {
  const a = new Admissions();
  const one = a.begin("m");
  const two = a.begin("m");
  const other = a.begin("n");
  expect([a.pending("m"), a.pending("n"), a.pending("x")]).toEqual([2, 1, 0]);
  one();
  one();
  expect(a.pending("m")).toBe(1);
  two();
  other();
  expect([a.pending("m"), a.pending("n")]).toEqual([0, 0]);
});
