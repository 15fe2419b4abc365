import { describe, expect, test } from "bun:test";
import { breakdown, cpuBetween, parseRecords, parseTaskStat, renderProfile, type ThreadCpu } from "../../load/profile.ts";

describe("parseTaskStat", () => {
  test("reads the name (spaces and parentheses allowed) and utime+stime as ms", () => {
    const line = "4242 (HTTP (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 9 0 123 456 789";
    expect(parseTaskStat(line)).toEqual({ name: "HTTP (x) y", ms: 2870 });
  });
});

describe("cpuBetween", () => {
  test("groups by thread name, the main thread apart, counting only what was spent between the snapshots", () => {
    const before: ThreadCpu = new Map([
      [10, { name: "bun", ms: 100 }],
      [11, { name: "Worker", ms: 50 }],
      [12, { name: "Worker", ms: 0 }],
    ]);
    const after: ThreadCpu = new Map([
      [10, { name: "bun", ms: 130 }],
      [11, { name: "Worker", ms: 80 }],
      [12, { name: "Worker", ms: 20 }],
      [13, { name: "JITWorker", ms: 5 }],
    ]);
    expect(Object.fromEntries(cpuBetween(before, after, 10))).toEqual({ "main thread": 30, "worker + ORT threads": 50, "JIT compiler": 5 });
  });

  test("the main thread is listed even when it spent no whole tick (a short level), other idle threads are not", () => {
    const snap: ThreadCpu = new Map([
      [10, { name: "bun", ms: 100 }],
      [11, { name: "Worker", ms: 50 }],
    ]);
    const later: ThreadCpu = new Map([
      [10, { name: "bun", ms: 100 }],
      [11, { name: "Worker", ms: 60 }],
      [12, { name: "JITWorker", ms: 0 }],
    ]);
    expect(Object.fromEntries(cpuBetween(snap, later, 10))).toEqual({ "main thread": 0, "worker + ORT threads": 10 });
  });
});

describe("breakdown", () => {
  const rec = (decodeRows: number, prefillTokens: number, runMs: number, stepMs: number, gapMs: number) => ({ decodeRows, prefillTokens, runMs, stepMs, postMs: 0.1, gapMs });
  test("averages decode-only steps so the parts add up to the interval; prefill steps are counted apart", () => {
    const b = breakdown([rec(0, 40, 50, 52, 1), rec(2, 0, 10, 11, 1), rec(2, 0, 20, 23, 3), rec(1, 45, 60, 61, 0)]);
    expect(b.decodeSteps).toBe(2);
    expect(b.prefillSteps).toBe(2);
    expect(b.runMs).toBe(15);
    expect(b.hostMs).toBe(2);
    expect(b.gapMs).toBe(2);
    expect(b.intervalMs).toBe(b.runMs + b.hostMs + b.gapMs);
    expect(b.prefillStepMs).toBe(113);
    expect(b.rows).toBe(2);
  });
  test("no decode steps: NaN means, rendered as dashes", () => {
    const b = breakdown(parseRecords(JSON.stringify(rec(0, 10, 5, 6, 0)) + "\n"));
    expect(b.decodeSteps).toBe(0);
    expect(Number.isNaN(b.runMs)).toBe(true);
    const text = renderProfile([{ clients: 1, steps: b, serverCpu: new Map([["main thread", 4]]), clientCpuMs: 2, tpotP50: NaN }]);
    expect(text).toContain("ORT run -");
    expect(text).toContain("main thread 4.0");
  });
});
