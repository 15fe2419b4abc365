// /metrics on a real kiln (HTTP on loopback, worker threads, the tiny model): known requests move the counters by
// exactly what the answers reported, and the histograms, gauges, restarts and refusals follow the server's state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors/api-error.ts";
import { parsePrometheusText, sampleValue, samplesOf, type Family } from "../helpers/prom-text.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let team: string;
beforeAll(async () => {
  server = await startTestServer({ KILN_METRICS_TEAM_LABELS: "1" });
  team = String(sqliteOf(server.deps.db).$client.query("SELECT team_id FROM api_keys LIMIT 1").get()!["team_id" as never]);
});
afterAll(() => server.stop(100));

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

/** How much a series grew between two scrapes. */
const grew = (before: Map<string, Family>, after: Map<string, Family>, name: string, labels: Record<string, string>) =>
  sampleValue(after, name, labels) - sampleValue(before, name, labels);

describe("/metrics on a live server", () => {
  test("3 chat requests: +3 requests for their route, status and team; tokens equal the usage they reported; TTFT, ITL and duration observed", async () => {
    const before = await scrape();
    let input = 0;
    let output = 0;
    for (let i = 0; i < 3; i++) {
      const res = await post("/v1/chat/completions", {
        model: server.modelId, messages: [{ role: "user", content: `count to ${i + 3}` }], max_tokens: 6 + i, temperature: 0, ignore_eos: true,
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      input += body.usage.prompt_tokens;
      output += body.usage.completion_tokens;
    }
    expect(output).toBe(6 + 7 + 8);
    const after = await scrape();
    const route = { method: "POST", route: "/v1/chat/completions" };
    expect(grew(before, after, "kiln_http_requests_total", { ...route, status: "200", team })).toBe(3);
    expect(grew(before, after, "kiln_http_request_duration_seconds_count", { ...route, status: "200" })).toBe(3);
    const tokens = { model: server.modelId, endpoint: "chat", team };
    expect(grew(before, after, "kiln_input_tokens_total", tokens)).toBe(input);
    expect(grew(before, after, "kiln_output_tokens_total", tokens)).toBe(output);
    const timing = { model: server.modelId, endpoint: "chat" };
    expect(grew(before, after, "kiln_time_to_first_token_seconds_count", timing)).toBe(3);
    const gaps = grew(before, after, "kiln_inter_token_latency_seconds_count", timing);
    expect(gaps).toBeGreaterThan(0);
    // At most one gap between two tokens of the same answer.
    expect(gaps).toBeLessThanOrEqual(output - 3);
    expect(grew(before, after, "kiln_inter_token_latency_seconds_sum", timing)).toBeGreaterThan(0);
  });

  test("streamed Responses and Messages count their tokens, labelled by family, once the stream ends", async () => {
    const before = await scrape();
    const r = await post("/v1/responses", { model: server.modelId, input: "hello", max_output_tokens: 16, temperature: 0, stream: true });
    const completed = (await r.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === "response.completed" || e.type === "response.incomplete");
    const m = await post("/v1/messages", { model: server.modelId, max_tokens: 10, messages: [{ role: "user", content: "hello" }], stream: true, temperature: 0 });
    const events = (await m.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    const start = events.find((e) => e.type === "message_start");
    const delta = events.find((e) => e.type === "message_delta");
    const after = await scrape();
    const tokens = (endpoint: string) => ({ model: server.modelId, endpoint, team });
    expect(grew(before, after, "kiln_input_tokens_total", tokens("responses"))).toBe(completed.response.usage.input_tokens);
    expect(grew(before, after, "kiln_output_tokens_total", tokens("responses"))).toBe(completed.response.usage.output_tokens);
    expect(grew(before, after, "kiln_input_tokens_total", tokens("messages"))).toBe(start.message.usage.input_tokens);
    expect(grew(before, after, "kiln_output_tokens_total", tokens("messages"))).toBe(delta.usage.output_tokens);
    expect(grew(before, after, "kiln_http_requests_total", { method: "POST", route: "/v1/responses", status: "200", team })).toBe(1);
    expect(grew(before, after, "kiln_http_requests_total", { method: "POST", route: "/v1/messages", status: "200", team })).toBe(1);
  });

  test("queue depth and batch size per worker: what the scheduler and the worker hold at scrape time", async () => {
    const idle = await scrape();
    expect(samplesOf(idle, "kiln_queue_depth")).toEqual([{ name: "kiln_queue_depth", labels: { model: server.modelId }, value: 0 }]);
    const workers = samplesOf(idle, "kiln_worker_batch_size", { model: server.modelId });
    expect(workers.map((w) => w.value)).toEqual([0]);
    // Two long streams: both run in the worker's batch while they last.
    const body = { model: server.modelId, messages: [{ role: "user", content: "go" }], max_tokens: 3000, temperature: 0, ignore_eos: true, stream: true };
    const controllers = [new AbortController(), new AbortController()];
    const streams = await Promise.all(controllers.map((c) => fetch(`${server.url}/v1/chat/completions`, {
      method: "POST", signal: c.signal, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(body),
    })));
    const readers = streams.map((s) => s.body!.getReader());
    await Promise.all(readers.map((r) => r.read()));
    const busy = await scrape();
    expect(sampleValue(busy, "kiln_worker_batch_size", workers[0]!.labels)).toBe(2);
    for (const c of controllers) c.abort();
    await waitFor(() => server.runtime.scheduler.load().active === 0, { what: "the aborted streams to leave the batch" });
    expect(sampleValue(await scrape(), "kiln_worker_batch_size", workers[0]!.labels)).toBe(0);
  });

  test("queue depth: sequences beyond the worker's batch wait, and the gauge counts them", async () => {
    const slots = server.deps.registry.list()[0]!.batching.maxBatch;
    const body = { model: server.modelId, messages: [{ role: "user", content: "go" }], max_tokens: 3000, temperature: 0, ignore_eos: true, stream: true };
    const controllers = Array.from({ length: slots + 2 }, () => new AbortController());
    const streams = controllers.map((c) => fetch(`${server.url}/v1/chat/completions`, {
      method: "POST", signal: c.signal, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(body),
    }).catch(() => null));
    try {
      const depth = await waitFor(async () => (server.runtime.scheduler.load().active === slots ? sampleValue(await scrape(), "kiln_queue_depth", { model: server.modelId }) : -1), {
        what: "a full batch and 2 waiting in the queue-depth gauge", until: (d) => d === 2,
      });
      expect(depth).toBe(2);
      expect(sampleValue(await scrape(), "kiln_worker_batch_size", { worker: String(server.runtime.pool.stats()[0]!.workerId), model: server.modelId })).toBe(slots);
    } finally {
      for (const c of controllers) c.abort();
      await Promise.all(streams);
    }
    await waitFor(() => server.runtime.scheduler.load(), { what: "an empty scheduler", until: (l) => l.active + l.waiting === 0 });
    expect(sampleValue(await scrape(), "kiln_queue_depth", { model: server.modelId })).toBe(0);
  });

  test("rate-limit (429) and billing (402) refusals are counted per team from the answer rendered", async () => {
    const before = await scrape();
    const refusals = [
      new ApiError(429, "rate_limit_error", "Rate limit reached", "rate_limit_exceeded", null, { "retry-after": "1" }),
      new ApiError(402, "billing_error", "Insufficient balance", "billing_not_configured"),
    ];
    const gate = server.deps.gate;
    const admit = gate.admit;
    try {
      for (const error of refusals) {
        gate.admit = async () => {
          throw error;
        };
        const res = await post("/v1/chat/completions", { model: server.modelId, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
        expect(res.status).toBe(error.status);
      }
    } finally {
      gate.admit = admit;
    }
    const after = await scrape();
    expect(grew(before, after, "kiln_refusals_total", { reason: "rate_limit", team })).toBe(1);
    expect(grew(before, after, "kiln_refusals_total", { reason: "billing", team })).toBe(1);
    expect(grew(before, after, "kiln_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "429", team })).toBe(1);
    // Refused before any work: no tokens counted.
    expect(grew(before, after, "kiln_input_tokens_total", { model: server.modelId, endpoint: "chat", team })).toBe(0);
  });

  test("a worker restart is counted for its model", async () => {
    const before = await scrape();
    const [worker] = server.runtime.pool.stats();
    server.runtime.pool.restart(worker!.workerId, "restarted by test");
    await waitFor(() => server.runtime.pool.stats().some((w) => w.state === "ready"), { what: "the replacement worker ready" });
    const after = await scrape();
    expect(grew(before, after, "kiln_worker_restarts_total", { model: server.modelId })).toBe(1);
    // The replacement shows up under its own worker id.
    expect(samplesOf(after, "kiln_worker_batch_size").map((s) => s.labels.worker)).not.toContain(String(worker!.workerId));
  });
});
