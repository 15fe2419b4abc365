// Parsing of /metrics scrapes for the load scenarios (test/load/prom-text.ts).
import { describe, expect, test } from "bun:test";
import { counterDelta, parsePromText, seriesValue } from "../../load/prom-text.ts";

const SCRAPE = `# HELP kiln_prefill_tokens_total Prompt positions run through prefill passes.
# TYPE kiln_prefill_tokens_total counter
kiln_prefill_tokens_total{model="m1"} 1500
kiln_prefill_tokens_total{model="m2"} 7
kiln_prefix_cache_hit_ratio{model="m1"} 0.25
kiln_http_requests_total{method="POST",route="/v1/chat/completions",status="200"} 3
kiln_http_requests_total{method="POST",route="/v1/chat/completions",status="500"} 1
odd_label{msg="a \\"quoted\\", comma\\nline"} 1e3
process_start_time_seconds 1.7e9
histogram_bucket{le="+Inf"} +Inf
not a sample line
broken{model="x" 5
`;

describe("Prometheus text", () => {
  const samples = parsePromText(SCRAPE);

  test("reads names, labels (escapes included) and values, skipping comments and malformed lines", () => {
    expect(samples.map((s) => s.name)).toEqual([
      "kiln_prefill_tokens_total", "kiln_prefill_tokens_total", "kiln_prefix_cache_hit_ratio",
      "kiln_http_requests_total", "kiln_http_requests_total", "odd_label", "process_start_time_seconds", "histogram_bucket",
    ]);
    expect(samples[5]).toEqual({ name: "odd_label", labels: { msg: 'a "quoted", comma\nline' }, value: 1000 });
    expect(samples[6]!.labels).toEqual({});
    expect(samples[7]!.value).toBe(Infinity);
  });

  test("a series by labels, summed over the labels not asked for; absent is undefined", () => {
    expect(seriesValue(samples, "kiln_prefill_tokens_total", { model: "m1" })).toBe(1500);
    expect(seriesValue(samples, "kiln_http_requests_total")).toBe(4);
    expect(seriesValue(samples, "kiln_http_requests_total", { status: "500" })).toBe(1);
    expect(seriesValue(samples, "kiln_prefill_tokens_total", { model: "m3" })).toBeUndefined();
    expect(seriesValue(samples, "kiln_prefix_cache_blocks")).toBeUndefined();
  });

  test("a counter's growth between scrapes; first seen counts from zero, missing after is undefined", () => {
    const after = parsePromText('kiln_prefill_tokens_total{model="m1"} 1600\nkiln_prefill_tokens_total{model="m3"} 9');
    expect(counterDelta(samples, after, "kiln_prefill_tokens_total", { model: "m1" })).toBe(100);
    expect(counterDelta(samples, after, "kiln_prefill_tokens_total", { model: "m3" })).toBe(9);
    expect(counterDelta(samples, after, "kiln_prefill_tokens_total", { model: "m2" })).toBeUndefined();
    expect(counterDelta([], [], "kiln_prefill_tokens_total")).toBeUndefined();
  });
});
