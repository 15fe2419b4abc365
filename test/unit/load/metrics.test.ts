import { describe, expect, test } from "bun:test";
import { interTokenGaps, medianBy, percentile, renderTable, summarize, targetLines, tpot } from "../../load/metrics.ts";

describe("serving metrics", () => {
  test("percentile interpolates between ranks", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([10, 0, 5], 100)).toBe(10);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  test("TPOT and ITL follow their definitions", () => {
    const t = { ttftMs: 100, e2eMs: 400, chunkTimesMs: [100, 200, 250, 400], outputTokens: 4 };
    expect(tpot(t)).toBe(100);
    expect(interTokenGaps(t)).toEqual([100, 50, 150]);
    expect(tpot({ ...t, outputTokens: 1 })).toBeNull();
  });

  test("summary counts tokens over wall time", () => {
    const a = { ttftMs: 10, e2eMs: 110, chunkTimesMs: [10, 60, 110], outputTokens: 3 };
    const b = { ttftMs: 30, e2eMs: 130, chunkTimesMs: [30, 130], outputTokens: 2 };
    const s = summarize(2, [a, b], 500);
    expect(s.outputTokPerSec).toBe(10);
    expect(s.ttftP50).toBe(20);
    expect(s.tpotP50).toBe(75);
    const table = renderTable([{ direct: 20, engine: 15, kiln: s }], 321, 10);
    expect(table).toContain("|             2 |");
    expect(table).toContain("0.50");
    expect(table).toContain("|         20.0 |         15.0 |       10.0 |");
    expect(table).toContain("peak server RSS: 321 MB");
  });

  test("targets compare the top level with the direct loop and with kiln alone", () => {
    const level = (clients: number, tokPerSec: number) => ({ ...summarize(clients, [], 1000), outputTokPerSec: tokPerSec });
    const met = targetLines([{ direct: 40, kiln: level(1, 30) }, { direct: 150, kiln: level(16, 135) }]);
    expect(met).toEqual(["target kiln@16 ≥ 0.85× direct@16: 0.90× (met)", "target kiln@16 ≥ 4× kiln@1: 4.50× (met)"]);
    const missed = targetLines([{ direct: 40, kiln: level(1, 40) }, { direct: 150, kiln: level(16, 120) }]);
    expect(missed).toEqual(["target kiln@16 ≥ 0.85× direct@16: 0.80× (MISSED)", "target kiln@16 ≥ 4× kiln@1: 3.00× (MISSED)"]);
    const rows = [{ direct: 40, kiln: level(1, 30) }, { direct: 150, kiln: { ...level(16, 135), ttftP95: 2100 } }];
    expect(targetLines(rows, 1000)[2]).toBe("target TTFT p95@16 ≤ 2× direct 16-prompt prefill: 2100 ms vs 2 × 1000 ms, 2.10× (MISSED)");
    expect(targetLines(rows, 1100)[2]).toBe("target TTFT p95@16 ≤ 2× direct 16-prompt prefill: 2100 ms vs 2 × 1100 ms, 1.91× (met)");
  });

  test("medianBy picks the middle round (lower middle when even)", () => {
    const rounds = [{ v: 9 }, { v: 1 }, { v: 5 }];
    expect(medianBy(rounds, (r) => r.v)).toBe(rounds[2]!);
    expect(medianBy([{ v: 4 }, { v: 2 }], (r) => r.v)).toEqual({ v: 2 });
    expect(() => medianBy([], () => 0)).toThrow();
  });
});
