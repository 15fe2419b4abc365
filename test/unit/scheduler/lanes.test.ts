// The lanes' pure rules: dispatch order, background lanes, the interactive reserve, and which rows yield or come back.
import { describe, expect, test } from "bun:test";
import type { ServiceTier } from "../../../src/inference/service-tier.ts";
import { backgroundBudget, byLane, isBackground, laneInsertAt, laneRank, rowsToPreempt, rowsToResume } from "../../../src/protocol/lanes.ts";

const item = (id: string, lane?: ServiceTier) => ({ id, lane });
const laneOf = (x: { lane?: ServiceTier }) => x.lane;

describe("lanes", () => {
  test("priority goes before default, and flex and batch share the last lane", () => {
    expect([laneRank("priority"), laneRank("default"), laneRank(undefined), laneRank("flex"), laneRank("batch")]).toEqual([0, 1, 1, 2, 2]);
    expect(["priority", "default", undefined, "flex", "batch"].map((l) => isBackground(l as ServiceTier | undefined))).toEqual([false, false, false, true, true]);
  });

  test("byLane orders by lane and keeps arrival order within a lane", () => {
    const items = [item("b1", "batch"), item("d1"), item("f1", "flex"), item("p1", "priority"), item("d2", "default"), item("b2", "batch"), item("p2", "priority")];
    expect(byLane(items, laneOf).map((x) => x.id)).toEqual(["p1", "p2", "d1", "d2", "b1", "f1", "b2"]);
  });

  test("laneInsertAt puts a newcomer after its own lane and before every later one", () => {
    const queue = [item("p1", "priority"), item("d1"), item("b1", "batch"), item("f1", "flex")];
    expect(laneInsertAt(queue, "priority", laneOf)).toBe(1);
    expect(laneInsertAt(queue, "default", laneOf)).toBe(2);
    expect(laneInsertAt(queue, undefined, laneOf)).toBe(2);
    expect(laneInsertAt(queue, "flex", laneOf)).toBe(4);
    expect(laneInsertAt([], "batch", laneOf)).toBe(0);
  });

  test("the background budget is the queue budget less the reserve, rounded in the reserve's favour", () => {
    expect(backgroundBudget(256, 25)).toBe(192);
    expect(backgroundBudget(10, 25)).toBe(7);
    expect(backgroundBudget(4, 0)).toBe(4);
    expect(backgroundBudget(1, 25)).toBe(0);
  });

  test("rowsToPreempt stops only background rows, as many as are missing, those with the fewest tokens first", () => {
    const rows = [
      { background: true, generated: 40 },
      { background: false, generated: 1 },
      { background: true, generated: 3 },
      { background: true, generated: 3 },
      { background: true, generated: 90 },
    ];
    // Two waiting, no free row: the two with 3 tokens (the later one first among equals), returned in row order.
    expect(rowsToPreempt(rows, 0, 2)).toEqual([2, 3]);
    expect(rowsToPreempt(rows, 0, 1)).toEqual([3]);
    expect(rowsToPreempt(rows, 1, 3)).toEqual([2, 3]);
    // Enough free rows, or nobody waiting: nothing stops.
    expect(rowsToPreempt(rows, 2, 2)).toEqual([]);
    expect(rowsToPreempt(rows, 0, 0)).toEqual([]);
    // Never more than the background rows there are.
    expect(rowsToPreempt(rows, 0, 9)).toEqual([0, 2, 3, 4]);
  });

  test("rowsToResume keeps the rows queued interactive work needs", () => {
    expect(rowsToResume(3, 4, 0)).toBe(3);
    expect(rowsToResume(3, 4, 2)).toBe(2);
    expect(rowsToResume(3, 1, 2)).toBe(0);
    expect(rowsToResume(0, 4, 0)).toBe(0);
  });
});
