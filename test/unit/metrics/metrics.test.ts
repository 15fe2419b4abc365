// The Metrics instruments render valid Prometheus text (checked by a strict parser) and count what they are told.
import { describe, expect, test } from "bun:test";
import { Metrics, refusalReason, type WorkerStat } from "../../../src/metrics/metrics.ts";
import { TokenTiming } from "../../../src/metrics/token-timing.ts";
import type { PrefixCacheStats } from "../../../src/protocol/text.ts";
import { parsePrometheusText, sampleValue, samplesOf } from "../../helpers/prom-text.ts";

const scrape = async (m: Metrics) => parsePrometheusText((await m.render()).body);

describe("Metrics", () => {
  test("requests by method, route, status and team; refusals from 429 and 402; odd methods collapse to 'other'", async () => {
    const m = new Metrics({ teamLabels: true });
    const req = { method: "POST", route: "/v1/chat/completions", team: "3", seconds: 0.2 };
    m.observeRequest({ ...req, status: 200 });
    m.observeRequest({ ...req, status: 200 });
    m.observeRequest({ ...req, status: 429 });
    m.observeRequest({ ...req, status: 402, team: "4" });
    m.observeRequest({ ...req, method: "BREW", status: 404, route: "unmatched", team: "" });
    const f = await scrape(m);
    expect(f.get("kiln_http_requests_total")?.type).toBe("counter");
    expect(sampleValue(f, "kiln_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "200", team: "3" })).toBe(2);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "429", team: "3" })).toBe(1);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "other", route: "unmatched", status: "404", team: "" })).toBe(1);
    expect(sampleValue(f, "kiln_refusals_total", { reason: "rate_limit", team: "3" })).toBe(1);
    expect(sampleValue(f, "kiln_refusals_total", { reason: "billing", team: "4" })).toBe(1);
    expect(samplesOf(f, "kiln_refusals_total")).toHaveLength(2);
    expect(f.get("kiln_http_request_duration_seconds")?.type).toBe("histogram");
    const labels = { method: "POST", route: "/v1/chat/completions", status: "200" };
    expect(sampleValue(f, "kiln_http_request_duration_seconds_count", labels)).toBe(2);
    expect(sampleValue(f, "kiln_http_request_duration_seconds_sum", labels)).toBeCloseTo(0.4, 6);
    expect(sampleValue(f, "kiln_http_request_duration_seconds_bucket", { ...labels, le: "0.1" })).toBe(0);
    expect(sampleValue(f, "kiln_http_request_duration_seconds_bucket", { ...labels, le: "0.25" })).toBe(2);
  });

  test("refusalReason: only 429 and 402 are refusals", () => {
    expect([429, 402, 403, 401, 503, 200].map(refusalReason)).toEqual(["rate_limit", "billing", null, null, null, null]);
  });

  test("tokens in and out add up per model, endpoint and team", async () => {
    const m = new Metrics({ teamLabels: true });
    const labels = { model: "tiny", endpoint: "chat", team: "1" };
    m.observeUsage(labels, { inputTokens: 12, outputTokens: 5 });
    m.observeUsage(labels, { inputTokens: 8, outputTokens: 0 });
    m.observeUsage({ ...labels, endpoint: "messages" }, { inputTokens: 1, outputTokens: 2 });
    const f = await scrape(m);
    expect(sampleValue(f, "kiln_input_tokens_total", labels)).toBe(20);
    expect(sampleValue(f, "kiln_output_tokens_total", labels)).toBe(5);
    expect(sampleValue(f, "kiln_output_tokens_total", { ...labels, endpoint: "messages" })).toBe(2);
  });

  test("settled generations by service tier: completed ones counted, tokens of every one by kind", async () => {
    const m = new Metrics();
    m.observeSettled({ model: "tiny", endpoint: "chat", tier: "batch" }, "completed", { inputTokens: 12, outputTokens: 5 });
    m.observeSettled({ model: "tiny", endpoint: "chat", tier: "batch" }, "client_gone", { inputTokens: 3, outputTokens: 1 });
    m.observeSettled({ model: "tiny", endpoint: "chat", tier: "default" }, "completed", { inputTokens: 1, outputTokens: 2 });
    const f = await scrape(m);
    expect(sampleValue(f, "kiln_tier_completed_requests_total", { model: "tiny", endpoint: "chat", tier: "batch" })).toBe(1);
    expect(sampleValue(f, "kiln_tier_completed_requests_total", { model: "tiny", endpoint: "chat", tier: "default" })).toBe(1);
    expect(sampleValue(f, "kiln_tier_tokens_total", { model: "tiny", tier: "batch", kind: "input" })).toBe(15);
    expect(sampleValue(f, "kiln_tier_tokens_total", { model: "tiny", tier: "batch", kind: "output" })).toBe(6);
  });

  test("queue depth by tier is read from the scheduler at scrape time, and absent while it reports none", async () => {
    const m = new Metrics();
    m.watch({ queueDepth: () => ({ tiny: 3 }), workers: () => [] });
    expect(samplesOf(await scrape(m), "kiln_tier_queue_depth")).toEqual([]);
    m.watch({ queueDepth: () => ({ tiny: 3 }), queueDepthByTier: () => [{ model: "tiny", tier: "batch", depth: 2 }, { model: "tiny", tier: "default", depth: 1 }], workers: () => [] });
    const f = await scrape(m);
    expect(sampleValue(f, "kiln_tier_queue_depth", { model: "tiny", tier: "batch" })).toBe(2);
    expect(sampleValue(f, "kiln_tier_queue_depth", { model: "tiny", tier: "default" })).toBe(1);
  });

  test("per-team series are opt-in: by default no series carries a team, so a thousand teams add none", async () => {
    const m = new Metrics();
    for (let team = 1; team <= 1000; team++) {
      m.observeRequest({ method: "POST", route: "/v1/chat/completions", status: team % 2 ? 200 : 429, team: String(team), seconds: 0.1 });
      m.observeUsage({ model: "tiny", endpoint: "chat", team: String(team) }, { inputTokens: 2, outputTokens: 1 });
    }
    const f = await scrape(m);
    for (const name of ["kiln_http_requests_total", "kiln_refusals_total", "kiln_input_tokens_total", "kiln_output_tokens_total"]) {
      expect(samplesOf(f, name).map((s) => s.labels.team)).toEqual(samplesOf(f, name).map(() => undefined));
    }
    expect(samplesOf(f, "kiln_http_requests_total")).toHaveLength(2);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "429" })).toBe(500);
    expect(sampleValue(f, "kiln_refusals_total", { reason: "rate_limit" })).toBe(500);
    expect(sampleValue(f, "kiln_input_tokens_total", { model: "tiny", endpoint: "chat" })).toBe(2000);
  });

  test("settlements the database refused: counted, with those journaled; replays at start-up counted", async () => {
    const m = new Metrics();
    let f = await scrape(m);
    // Present at zero from the start, so an alert can watch them.
    expect(samplesOf(f, "kiln_settlement_failures_total")).toHaveLength(1);
    m.settlementFailed(true);
    m.settlementFailed(false);
    m.settlementsReplayed(3);
    f = await scrape(m);
    expect(sampleValue(f, "kiln_settlement_failures_total")).toBe(2);
    expect(sampleValue(f, "kiln_settlements_journaled_total")).toBe(1);
    expect(sampleValue(f, "kiln_settlements_replayed_total")).toBe(3);
  });

  test("queue depth and per-worker batch size are read from the runtime at scrape time; restarts count", async () => {
    const m = new Metrics();
    let waiting = 3;
    m.watch({
      queueDepth: () => ({ tiny: waiting, other: 0 }),
      workers: () => [{ workerId: 1, model: "tiny", held: 4, rssBytes: 1000 }, { workerId: 2, model: "tiny", held: 0, rssBytes: 2000 }],
    });
    m.workerRestarted("tiny");
    m.workerRestarted("tiny");
    let f = await scrape(m);
    expect(f.get("kiln_queue_depth")?.type).toBe("gauge");
    expect(sampleValue(f, "kiln_queue_depth", { model: "tiny" })).toBe(3);
    expect(sampleValue(f, "kiln_queue_depth", { model: "other" })).toBe(0);
    expect(samplesOf(f, "kiln_queue_depth", { model: "other" })).toHaveLength(1);
    expect(sampleValue(f, "kiln_worker_batch_size", { worker: "1", model: "tiny" })).toBe(4);
    expect(sampleValue(f, "kiln_worker_batch_size", { worker: "2", model: "tiny" })).toBe(0);
    expect(sampleValue(f, "kiln_worker_resident_memory_bytes", { worker: "2", model: "tiny" })).toBe(2000);
    expect(sampleValue(f, "kiln_worker_restarts_total", { model: "tiny" })).toBe(2);
    waiting = 0;
    f = await scrape(m);
    expect(sampleValue(f, "kiln_queue_depth", { model: "tiny" })).toBe(0);
  });

  test("the dashboard reads the same workers and restarts the scrape does; no workers reported without a runtime", async () => {
    const m = new Metrics();
    expect(m.workersNow()).toBeNull();
    expect(await m.restartsByModel()).toEqual(new Map());
    const workers = [{ workerId: 1, model: "tiny", state: "ready", held: 2, rssBytes: 1000 }];
    m.watch({ queueDepth: () => ({}), workers: () => workers });
    m.workerRestarted("tiny");
    m.workerRestarted("tiny");
    m.workerRestarted("other");
    expect(m.workersNow()).toEqual(workers);
    expect(await m.restartsByModel()).toEqual(new Map([["tiny", 2], ["other", 1]]));
    expect(sampleValue(await scrape(m), "kiln_worker_restarts_total", { model: "tiny" })).toBe(2);
  });

  test("TokenTiming: the first output is TTFT from the run's start, each later one an inter-token gap", async () => {
    const m = new Metrics();
    const t = new TokenTiming(m, { model: "tiny", endpoint: "responses" }, 1000);
    t.output(1300);
    t.output(1320);
    t.output(1370);
    const f = await scrape(m);
    const labels = { model: "tiny", endpoint: "responses" };
    expect(sampleValue(f, "kiln_time_to_first_token_seconds_count", labels)).toBe(1);
    expect(sampleValue(f, "kiln_time_to_first_token_seconds_sum", labels)).toBeCloseTo(0.3, 6);
    expect(sampleValue(f, "kiln_inter_token_latency_seconds_count", labels)).toBe(2);
    expect(sampleValue(f, "kiln_inter_token_latency_seconds_sum", labels)).toBeCloseTo(0.07, 6);
    expect(sampleValue(f, "kiln_inter_token_latency_seconds_bucket", { ...labels, le: "0.02" })).toBe(1);
    expect(sampleValue(f, "kiln_inter_token_latency_seconds_bucket", { ...labels, le: "0.05" })).toBe(2);
  });

  test("the server's registry adds the process metrics, without the per-space heap figures that stall a scrape", async () => {
    const m = new Metrics({ processMetrics: true });
    const f = await scrape(m);
    expect(sampleValue(f, "process_resident_memory_bytes")).toBeGreaterThan(1e6);
    expect(sampleValue(f, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    // The heap-space figures (about 10 ms of a scrape here, against ~1 ms for the rest) are what is left out; a timing
    // assertion would measure the box's load, so the test checks their absence.
    expect([...f.keys()].filter((name) => name.startsWith("nodejs_heap_space"))).toEqual([]);
  });
});

describe("prefix-cache metrics", () => {
  const stats = (o: Partial<PrefixCacheStats>): PrefixCacheStats => ({ blocks: 0, bytes: 0, evictions: 0, promptTokens: 0, hitTokens: 0, prefillTokens: 0, ...o });

  test("counters grow by each worker's increments, never down across a restart; gauges sum the live workers; the ratio is since the start", async () => {
    const m = new Metrics();
    let workers: WorkerStat[] = [{ workerId: 1, model: "tiny", held: 0, rssBytes: 0 }, { workerId: 2, model: "tiny", held: 0, rssBytes: 0 }];
    m.watch({ queueDepth: () => ({}), workers: () => workers });
    m.observePrefixCache(1, "tiny", stats({ blocks: 4, bytes: 4000, promptTokens: 64, hitTokens: 0, prefillTokens: 64 }));
    m.observePrefixCache(1, "tiny", stats({ blocks: 5, bytes: 5000, evictions: 2, promptTokens: 128, hitTokens: 48, prefillTokens: 80 }));
    m.observePrefixCache(2, "tiny", stats({ blocks: 1, bytes: 1000, promptTokens: 32, hitTokens: 16, prefillTokens: 16 }));
    let f = await scrape(m);
    const tiny = { model: "tiny" };
    expect(f.get("kiln_prefix_cache_blocks")?.type).toBe("gauge");
    expect(f.get("kiln_prefix_cache_hit_tokens_total")?.type).toBe("counter");
    expect(sampleValue(f, "kiln_prefix_cache_blocks", tiny)).toBe(6);
    expect(sampleValue(f, "kiln_prefix_cache_bytes", tiny)).toBe(6000);
    expect(sampleValue(f, "kiln_prefix_cache_evictions_total", tiny)).toBe(2);
    expect(sampleValue(f, "kiln_prefix_cache_prompt_tokens_total", tiny)).toBe(160);
    expect(sampleValue(f, "kiln_prefix_cache_hit_tokens_total", tiny)).toBe(64);
    expect(sampleValue(f, "kiln_prefill_tokens_total", tiny)).toBe(96);
    expect(sampleValue(f, "kiln_prefix_cache_hit_ratio", tiny)).toBeCloseTo(64 / 160, 12);
    // Worker 1 is replaced by worker 3, which starts from zero; worker 2 restarts in place and reports less than before.
    workers = [{ workerId: 2, model: "tiny", held: 0, rssBytes: 0 }, { workerId: 3, model: "tiny", held: 0, rssBytes: 0 }];
    m.observePrefixCache(3, "tiny", stats({ blocks: 2, bytes: 2000, promptTokens: 40, hitTokens: 0, prefillTokens: 40 }));
    m.observePrefixCache(2, "tiny", stats({ blocks: 0, bytes: 0, promptTokens: 8, hitTokens: 0, prefillTokens: 8 }));
    f = await scrape(m);
    expect(sampleValue(f, "kiln_prefix_cache_blocks", tiny)).toBe(2);
    expect(sampleValue(f, "kiln_prefix_cache_bytes", tiny)).toBe(2000);
    expect(sampleValue(f, "kiln_prefix_cache_prompt_tokens_total", tiny)).toBe(208);
    expect(sampleValue(f, "kiln_prefix_cache_hit_tokens_total", tiny)).toBe(64);
    expect(sampleValue(f, "kiln_prefill_tokens_total", tiny)).toBe(144);
    expect(sampleValue(f, "kiln_prefix_cache_hit_ratio", tiny)).toBeCloseTo(64 / 208, 12);
    // No worker left: nothing held.
    workers = [];
    expect(sampleValue(await scrape(m), "kiln_prefix_cache_blocks", tiny)).toBe(0);
  });

  test("before any report there are no series, and the ratio is 0 for a model that looked nothing up", async () => {
    const m = new Metrics();
    expect(samplesOf(await scrape(m), "kiln_prefix_cache_hit_ratio")).toEqual([]);
    m.observePrefixCache(1, "tiny", stats({ blocks: 0 }));
    expect(sampleValue(await scrape(m), "kiln_prefix_cache_hit_ratio", { model: "tiny" })).toBe(0);
  });
});

describe("the strict exposition parser used by the tests", () => {
  const ok = "# HELP a_total x\n# TYPE a_total counter\na_total{k=\"v\\\"q\\\\\"} 2\n";
  test("accepts valid text and unescapes label values", () => {
    expect(sampleValue(parsePrometheusText(ok), "a_total", { k: 'v"q\\' })).toBe(2);
  });
  test.each([
    ["no trailing newline", ok.trimEnd()],
    ["a bad metric name", "# TYPE 1a counter\n1a 1\n"],
    ["a bad escape", '# TYPE a gauge\na{k="\\x"} 1\n'],
    ["an unquoted label value", "# TYPE a gauge\na{k=v} 1\n"],
    ["a bad value", "# TYPE a gauge\na one\n"],
    ["a negative counter", "# TYPE a_total counter\na_total -1\n"],
    ["a duplicate series", "# TYPE a gauge\na{k=\"1\"} 1\na{k=\"1\"} 2\n"],
    ["a family split in two", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n"],
    ["TYPE after samples", "a 1\n# TYPE a gauge\n"],
    ["non-cumulative buckets", '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
    ["+Inf bucket unlike _count", '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
    ["no +Inf bucket", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_sum 1\nh_count 2\n'],
  ])("rejects %s", (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
