// The README test's reading of the prefix bench's printout (test/load/prefix-output.ts), on printouts the report makes.
import { describe, expect, test } from "bun:test";
import { prefixOutputProblems, tableRows } from "../../load/prefix-output.ts";
import { cacheLine, type Conversation, type PrefixResults, prefixTargetLines, renderPrefixTable } from "../../load/prefix-report.ts";

const CPU = "cpu: AMD EPYC, 2 logical cores; avx2 fma f16c; int8 kernels: AVX2 (no VNNI: int16 pair sums); load average 1.2 on 2 cores";
const shape = { turns: 3, clients: 4, levels: [1, 4] };

function results(on: Partial<Conversation>, off: Partial<Conversation>, extra: Partial<PrefixResults> = {}): PrefixResults {
  return {
    responses: { on: { ttftMs: [30, 31, 32], ...on }, off: { ttftMs: [30, 50, 70], ...off } },
    messages: { on: { ttftMs: [20, 21, 22] }, off: { ttftMs: [20, 40, 60] } },
    shared: { on: { ttftMs: [100, 200, 300, 400] }, off: { ttftMs: [100, 200, 300, 400] } },
    sharedClients: 4,
    systemTokens: 1500,
    fresh: [{ clients: 1, on: 100, off: 101, llama: { wall: 90, format: "q8_0" } }, { clients: 4, on: 300, off: 290 }],
    ...extra,
  };
}

const printout = (r: PrefixResults) => [CPU, "", renderPrefixTable(r), ...prefixTargetLines(r), cacheLine("cache on server after the sitting", [], "m"), cacheLine("cache off server after the sitting", [], "m")].join("\n");

describe("prefix bench printout", () => {
  test("the table's rows by label", () => {
    const rows = tableRows(printout(results({ cachedLast: 0 }, { cachedLast: 0 })));
    expect(rows.get("fresh prompts, 1 client: output tok/s")).toEqual(["100.0", "101.0", "on/off 0.99×", "90.0 Q8_0", "on/off ≥ 0.97×"]);
    expect(rows.get("measure")).toEqual(["cache on", "cache off", "on vs off", "llama.cpp", "target"]);
  });

  test("today's server (no cache metrics, cached_tokens 0) passes", () => {
    expect(prefixOutputProblems(printout(results({ cachedLast: 0 }, { cachedLast: 0 })), shape)).toEqual([]);
  });

  test("a server with the cache passes when the cache shows, and fails when it does not", () => {
    const working = results({ cachedLast: 230, prefillTokens: 350 }, { cachedLast: 0, prefillTokens: 600 });
    expect(prefixOutputProblems(printout(working), shape)).toEqual([]);
    const idle = results({ cachedLast: 0, prefillTokens: 600 }, { cachedLast: 0, prefillTokens: 600 });
    expect(prefixOutputProblems(printout(idle), shape)).toEqual([
      "with the cache on, the chain's turn 3 read 0 cached tokens",
      "the chain computed 600 prefill tokens with the cache, 600 without",
    ]);
    const leaky = results({ cachedLast: 230, prefillTokens: 350 }, { cachedLast: 12, prefillTokens: 600 });
    expect(prefixOutputProblems(printout(leaky), shape)).toEqual(["with the cache off, the chain's turn 3 read 12 cached tokens"]);
  });

  test("missing rows, figures, lines and verdicts are named", () => {
    const r = results({ cachedLast: 0 }, { cachedLast: 0 });
    expect(prefixOutputProblems(printout(r), { ...shape, levels: [1, 16] })).toEqual(['no row "fresh prompts, 16 clients: output tok/s"']);
    const noTtft = results({ cachedLast: 0, ttftMs: [] }, { cachedLast: 0 });
    const problems = prefixOutputProblems(printout(noTtft), shape);
    expect(problems).toContain('"Responses previous_response_id: TTFT turn 1 ms" cell 1 is "n/a", expected /^\\d+\\.\\d$/');
    expect(problems).toContain("TTFT target without a figure: target Responses previous_response_id TTFT turn 0 ≤ 1.2× turn 1 with the cache: n/a (no TTFT)");
    expect(prefixOutputProblems(printout(results({}, {})), shape)).toContain("the Responses chain reported no cached_tokens");
    const bare = prefixOutputProblems("nothing printed", shape);
    expect(bare).toContain("no cpu line");
    expect(bare).toContain("0 target lines, expected 6");
    expect(bare).toContain("no cache line for the cache-off server");
  });
});
