import { describe, expect, test } from "bun:test";
import { prefixCacheMib } from "../../load/gguf-levels.ts";
import { ggufTargetLines, renderGgufTable, rssLine, type GgufLevel } from "../../load/gguf-report.ts";
import type { LevelSummary } from "../../load/metrics.ts";

const kiln = (clients: number, tokPerSec: number, tpotP50: number): LevelSummary => ({ clients, outputTokPerSec: tokPerSec, ttftP50: 120.4, ttftP95: 180.6, tpotP50, itlP95: 0, requests: clients });
const rows: GgufLevel[] = [
  { clients: 1, kiln: kiln(1, 30, 25), llama: { batch: 1, wall: 40, decode: 42, prefillMs: 90 } },
  { clients: 16, kiln: kiln(16, 160, 80), llama: { batch: 16, wall: 100, decode: 110, prefillMs: 900 } },
];

describe("the --gguf report", () => {
  test("one row per level: both rates of each side, their ratios, and TTFT (llama.cpp's is its prefill)", () => {
    const lines = renderGgufTable(rows).split("\n");
    expect(lines[0]).toContain("kiln/llama wall");
    expect(lines[2]!.split("|").map((c) => c.trim()).filter(Boolean)).toEqual(["1", "30.0", "40.0", "0.75×", "40.0", "42.0", "0.95×", "120", "181", "90", "90"]);
    expect(lines[3]!.split("|").map((c) => c.trim()).filter(Boolean)).toEqual(["16", "160.0", "100.0", "1.60×", "200.0", "110.0", "1.82×", "120", "181", "900", "900"]);
  });

  test("the targets are marked met or not met from the figures", () => {
    const rss = { kilnMb: 700, kilnIdleMb: 610, cacheOn: { budgetMib: 2410, peakMb: 940 }, llamaMb: 500, llamaAfterLoadMb: 450 };
    expect(ggufTargetLines(rows, rss)).toEqual([
      "target kiln@1 ≥ 1.0× llama.cpp@1 (wall): 0.75× (not met)",
      "target kiln@16 ≥ 1.5× llama.cpp@16 (wall): 1.60× (met)",
      "target kiln peak RSS (prefix cache off) ≤ 1.3× llama.cpp's: 1.40× (not met)",
    ]);
    expect(ggufTargetLines(rows, { ...rss, kilnMb: 650 })[2]).toEndWith("1.30× (met)");
    expect(rssLine(rss)).toEqual([
      "peak RSS, prefix cache off: kiln server process 700 MB (610 MB after loading, before any request); llama.cpp child process 500 MB (450 MB after loading the file); kiln/llama.cpp 1.40×",
      "peak RSS, prefix cache on (budget 2410 MiB per worker, the default), the same requests: kiln 940 MB; the cache's share 240 MB; kiln/llama.cpp 1.88×",
    ]);
    expect(rssLine({ ...rss, cacheOn: null })).toHaveLength(1);
  });

  test("the prefix-cache budget comes from the server's start-up log line", () => {
    const log = ['{"level":"info","msg":"database"}', "not json", '{"level":"info","msg":"prefix cache","mib_per_worker":2410,"block_tokens":16}'].join("\n");
    expect(prefixCacheMib(log)).toBe(2410);
    expect(prefixCacheMib('{"msg":"listening"}')).toBeNull();
  });
});
