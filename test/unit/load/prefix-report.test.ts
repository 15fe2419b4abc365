// The prefix-cache bench's table and targets (test/load/prefix-report.ts): figures, ratios, and n/a for what is missing.
import { describe, expect, test } from "bun:test";
import { parsePromText } from "../../load/prom-text.ts";
import { cacheLine, medianConversation, prefillCut, prefixRows, prefixTargetLines, type PrefixResults, renderPrefixTable, turnGrowth } from "../../load/prefix-report.ts";

const full: PrefixResults = {
  responses: { on: { ttftMs: [100, 110, 105], cachedLast: 230, prefillTokens: 360 }, off: { ttftMs: [100, 200, 300], cachedLast: 0, prefillTokens: 700 } },
  messages: { on: { ttftMs: [80, 120], cachedLast: 120, prefillTokens: 250 }, off: { ttftMs: [80, 160], cachedLast: 0, prefillTokens: 370 } },
  shared: { on: { ttftMs: [100, 120, 140, 200], prefillTokens: 1700, cachedTokens: 4500 }, off: { ttftMs: [300, 500, 700, 900], prefillTokens: 6200, cachedTokens: 0 } },
  sharedClients: 4,
  systemTokens: 1500,
  fresh: [{ clients: 1, on: 20, off: 20.2, llama: { wall: 18.5, format: "q4_0" } }, { clients: 16, on: 90, off: 100 }],
};

/** The PrefixResults a server without the cache's metrics and usage fields produces. */
const bare: PrefixResults = {
  ...full,
  responses: { on: { ttftMs: [100, 110, 105] }, off: { ttftMs: [100, 200, 300] } },
  messages: { on: { ttftMs: [] }, off: { ttftMs: [] } },
  shared: { on: { ttftMs: [100, 120] }, off: { ttftMs: [300, 500] } },
};

describe("prefix bench report", () => {
  test("growth and cut follow their definitions", () => {
    expect(turnGrowth(full.responses.on)).toBeCloseTo(1.05);
    expect(turnGrowth(full.responses.off)).toBe(3);
    expect(turnGrowth({ ttftMs: [] })).toBeUndefined();
    expect(prefillCut(full.shared)).toBeCloseTo(1 - 1700 / 6200);
    expect(prefillCut(bare.shared)).toBeUndefined();
    expect(prefillCut({ on: { prefillTokens: 5 }, off: { prefillTokens: 0 } })).toBeUndefined();
  });

  test("the table has every row, each with its on and off figures", () => {
    const rows = prefixRows(full);
    expect(rows.map((r) => r[0])).toEqual([
      "Responses previous_response_id: TTFT turn 1 ms", "Responses previous_response_id: TTFT turn 3 ms", "Responses previous_response_id: TTFT turn 3 / turn 1",
      "Responses previous_response_id: cached tokens at turn 3", "Responses previous_response_id: prefill tokens computed",
      "Messages history re-sent: TTFT turn 1 ms", "Messages history re-sent: TTFT turn 2 ms", "Messages history re-sent: TTFT turn 2 / turn 1",
      "Messages history re-sent: cached tokens at turn 2", "Messages history re-sent: prefill tokens computed",
      "4 clients, one 1500-token system prompt: prefill tokens computed", "4 clients, one 1500-token system prompt: cached tokens, all clients",
      "4 clients, one 1500-token system prompt: TTFT p50 ms", "4 clients, one 1500-token system prompt: TTFT p95 ms",
      "fresh prompts, 1 client: output tok/s", "fresh prompts, 16 clients: output tok/s",
    ]);
    expect(rows[2]!.slice(1)).toEqual(["1.05×", "3.00×", "", "", "on ≤ 1.2×"]);
    expect(rows[10]!.slice(1)).toEqual(["1700", "6200", "72.6% fewer", "", "≥ 90% fewer"]);
    expect(rows[13]!.slice(1, 4)).toEqual(["191.0", "870.0", "off/on 4.55×"]);
    expect(rows[14]!.slice(1)).toEqual(["20.0", "20.2", "on/off 0.99×", "18.5 Q4_0", "on/off ≥ 0.97×"]);
    expect(rows[15]![4]).toBe("skipped");
    const table = renderPrefixTable(full).split("\n");
    expect(table[0]).toMatch(/^\| measure +\| cache on \| cache off \| +on vs off \| llama\.cpp \| +target \|$/);
    expect(table).toHaveLength(2 + rows.length);
  });

  test("targets say met or MISSED with their figure", () => {
    expect(prefixTargetLines(full)).toEqual([
      "target Responses previous_response_id TTFT turn 3 ≤ 1.2× turn 1 with the cache: 1.05× (met)",
      "target Messages history re-sent TTFT turn 2 ≤ 1.2× turn 1 with the cache: 1.50× (MISSED)",
      "target shared system prompt: ≥ 90% fewer prefill tokens computed with the cache: 72.6% fewer (MISSED)",
      "target shared system prompt: TTFT p95 off/on ≥ 3×: 4.55× (met)",
      "target fresh prompts @1: cache on ≥ 0.97× off (within 3%): 0.99× (met)",
      "target fresh prompts @16: cache on ≥ 0.97× off (within 3%): 0.90× (MISSED)",
    ]);
  });

  test("missing metrics and usage fields print n/a, never throw", () => {
    const rows = prefixRows(bare);
    expect(rows[3]!.slice(1, 3)).toEqual(["n/a", "n/a"]);
    expect(rows[5]!.slice(1, 4)).toEqual(["n/a", "n/a", "off/on n/a"]);
    expect(rows[10]!.slice(1, 4)).toEqual(["n/a", "n/a", "n/a"]);
    const lines = prefixTargetLines(bare);
    expect(lines[1]).toBe("target Messages history re-sent TTFT turn 0 ≤ 1.2× turn 1 with the cache: n/a (no TTFT)");
    expect(lines[2]).toBe("target shared system prompt: ≥ 90% fewer prefill tokens computed with the cache: n/a (kiln_prefill_tokens_total not reported)");
  });

  test("the cache line reads the gauges and counters for one model", () => {
    const scrape = parsePromText([
      'kiln_prefix_cache_blocks{model="m"} 12', 'kiln_prefix_cache_bytes{model="m"} 3145728', 'kiln_prefix_cache_evictions_total{model="m"} 2',
      'kiln_prefix_cache_hit_ratio{model="m"} 0.5', 'kiln_prefix_cache_prompt_tokens_total{model="m"} 400', 'kiln_prefix_cache_hit_tokens_total{model="m"} 200',
      'kiln_prefill_tokens_total{model="m"} 200', 'kiln_prefix_cache_blocks{model="other"} 99',
    ].join("\n"));
    expect(cacheLine("on", scrape, "m")).toBe("on: prefix cache blocks 12, 3.0 MiB, evictions 2, hit ratio 0.500, prompt/hit tokens 400/200, prefill tokens 200");
    expect(cacheLine("off", [], "m")).toBe("off: prefix cache blocks n/a, n/a MiB, evictions n/a, hit ratio n/a, prompt/hit tokens n/a/n/a, prefill tokens n/a");
  });
});

describe("medianConversation", () => {
  test("each turn's median TTFT over the conversations; the first one's counts", () => {
    const runs = [
      { ttftMs: [100, 900, 300], cachedLast: 40, prefillTokens: 120 },
      { ttftMs: [110, 200, 310], cachedLast: 41, prefillTokens: 130 },
      { ttftMs: [90, 210, 5000], cachedLast: 42, prefillTokens: 140 },
    ];
    expect(medianConversation(runs)).toEqual({ ttftMs: [100, 210, 310], cachedLast: 40, prefillTokens: 120 });
  });
});
