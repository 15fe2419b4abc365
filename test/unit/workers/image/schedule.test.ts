// The Euler schedule against values computed with numpy the way diffusers computes them (float64 interp).
import { describe, expect, test } from "bun:test";
import { buildSchedule, editStartIndex, interpIndex, linspace, roundHalfEven, type SchedulerSpec, timestepsFor, trainingSigmas } from "../../../../workers/image/schedule.ts";

const SD: SchedulerSpec = { ancestral: false, betaSchedule: "scaled_linear", betaStart: 0.00085, betaEnd: 0.012, trainSteps: 1000, prediction: "epsilon", spacing: "trailing", stepsOffset: 0 };

const close = (got: number[], want: number[], digits = 9) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(g).toBeCloseTo(want[i]!, digits));
};

describe("helpers", () => {
  test("linspace ends exactly at stop; one point is the start", () => {
    expect(linspace(0, 999, 4)).toEqual([0, 333, 666, 999]);
    expect(linspace(2, 5, 1)).toEqual([2]);
  });

  test("roundHalfEven rounds halves to the even neighbour, like numpy", () => {
    expect([0.5, 1.5, 2.5, 812.5, 937.5, -0.5, -1.5, 2.4, 2.6].map(roundHalfEven)).toEqual([0, 2, 2, 812, 938, -0, -2, 2, 3]);
  });

  test("interpIndex is linear between neighbours and clamps at the ends", () => {
    const ys = [0, 10, 30];
    expect([-1, 0, 0.5, 1, 1.25, 2, 5].map((x) => interpIndex(x, ys))).toEqual([0, 0, 5, 10, 15, 30, 30]);
  });

  test("training sigmas of the SD schedule", () => {
    const s = trainingSigmas(SD);
    expect(s.length).toBe(1000);
    expect(s[0]!).toBeCloseTo(0.029167158151720367, 12);
    expect(s[999]!).toBeCloseTo(14.614641229333639, 9);
  });
});

describe("timesteps per spacing", () => {
  test("trailing: 1, 4 and 16 steps (16 has halves that round to even)", () => {
    expect(timestepsFor(SD, 1)).toEqual([999]);
    expect(timestepsFor(SD, 4)).toEqual([999, 749, 499, 249]);
    expect(timestepsFor(SD, 16)).toEqual([999, 937, 874, 811, 749, 687, 624, 561, 499, 437, 374, 311, 249, 187, 124, 61]);
  });

  test("trailing yields exactly S values where numpy's arange gives S + 1 (S = 61)", () => {
    const t = timestepsFor(SD, 61);
    expect(t.length).toBe(61);
    expect(t.at(-1)).toBe(15);
  });

  test("linspace: float32 values, highest first", () => {
    expect(timestepsFor({ ...SD, spacing: "linspace" }, 4)).toEqual([999, 666, 333, 0]);
    expect(timestepsFor({ ...SD, spacing: "linspace" }, 6)).toEqual([999, 799.2000122070312, 599.4000244140625, 399.6000061035156, 199.8000030517578, 0]);
  });

  test("leading adds steps_offset", () => {
    expect(timestepsFor({ ...SD, spacing: "leading", stepsOffset: 1 }, 4)).toEqual([751, 501, 251, 1]);
  });
});

describe("buildSchedule", () => {
  test("trailing 4 steps: sigmas end with 0, init sigma is the largest", () => {
    const s = buildSchedule(SD, 4);
    close(s.sigmas, [14.614641229333639, 4.081729363724308, 1.612886194303876, 0.6932048996386885, 0]);
    expect(s.initNoiseSigma).toBeCloseTo(14.614641229333639, 9);
  });

  test("linspace 6 steps interpolates between training sigmas", () => {
    close(buildSchedule({ ...SD, spacing: "linspace" }, 6).sigmas, [14.614641229333639, 5.0924163617746965, 2.279734012615095, 1.1628660582244075, 0.5711896692345764, 0.029167158151720367, 0]);
  });

  test("leading: init sigma is √(max² + 1)", () => {
    const s = buildSchedule({ ...SD, spacing: "leading", stepsOffset: 1 }, 4);
    close(s.sigmas, [4.116696479276065, 1.623692081515863, 0.6983980911630334, 0.04131441199678309, 0]);
    expect(s.initNoiseSigma).toBeCloseTo(4.236412385791066, 9);
  });

  test("linear betas", () => {
    const s = buildSchedule({ ...SD, betaSchedule: "linear", betaStart: 0.0001, betaEnd: 0.02 }, 3);
    expect(s.timesteps).toEqual([999, 666, 332]);
    close(s.sigmas, [157.40728081040757, 9.488920229525215, 1.4551132702936442, 0], 7);
  });

  test("refuses a step count that is not a positive integer", () => {
    expect(() => buildSchedule(SD, 0)).toThrow("steps must be a positive integer");
    expect(() => buildSchedule(SD, 2.5)).toThrow("steps must be a positive integer");
  });
});

describe("editStartIndex", () => {
  test("runs the last ⌊S·strength⌋ steps", () => {
    expect(editStartIndex(4, 0.5)).toBe(2);
    expect(editStartIndex(4, 1)).toBe(0);
    expect(editStartIndex(10, 0.75)).toBe(3);
    expect(editStartIndex(10, 0.7)).toBe(3);
  });

  test("at least one step runs, however small the strength", () => {
    expect(editStartIndex(4, 0.1)).toBe(3);
    expect(editStartIndex(1, 0.01)).toBe(0);
  });
});
