// Admission limits, client disconnects, a killed worker and a worker that cannot start, through the real server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { streamChat } from "../load/stream-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ KILN_MAX_QUEUE: "2", KILN_WORKERS: "2" });
});
afterAll(() => s.stop(1000));

function post(body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, messages: [{ role: "user", content: "go" }], temperature: 0, ...body }),
    signal,
  });
}

/** Starts a long stream and resolves once its first chunk arrived (so it holds a slot). */
async function holdSlot(): Promise<AbortController> {
  const ctl = new AbortController();
  const res = await post({ stream: true, max_tokens: 3000, ignore_eos: true }, ctl.signal);
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  return ctl;
}

describe("admission, disconnects and worker failure", () => {
  test("beyond the limit: 503 service_overloaded with Retry-After 60; a disconnect frees the slot", async () => {
    const a = await holdSlot();
    const b = await holdSlot();
    const over = await post({ max_tokens: 2 });
    expect(over.status).toBe(503);
    expect(over.headers.get("retry-after")).toBe("60");
    expect(((await over.json()) as any).error).toMatchObject({ type: "server_error", code: "service_overloaded" });
    a.abort();
    // The cancelled sequence leaves within a step; the next request is admitted.
    await waitFor(async () => (await post({ max_tokens: 2 })).status === 200, { what: "a request admitted after the disconnect" });
    b.abort();
    await waitFor(() => s.runtime.scheduler.load().active === 0, { what: "no active sequence" });
  });

  test("a crashed worker fails only its own requests, retryably; the next request succeeds", async () => {
    // Different prompts: equal ones would go to the same worker (its prefix cache holds them).
    const victim = post({ max_tokens: 3000, ignore_eos: true });
    const bystander = post({ max_tokens: 400, ignore_eos: true, messages: [{ role: "user", content: "stay" }] });
    // One sequence on each of the two workers (a list of two, so `every` cannot hold vacuously).
    const oneEach = () => s.runtime.pool.stats().map((w) => w.held);
    await waitFor(() => oneEach().join() === "1,1", { what: "one sequence on each worker" });
    // An uncaught exception inside the worker thread kills it, as a real crash would.
    const target = s.runtime.pool.stats()[0]!;
    s.workers[target.workerId - 1]!.postMessage(null);
    const [a, b] = await Promise.all([victim, bystander]);
    // Sequences spread over both workers; whichever sat on the crashed one failed, the other finished.
    expect([a.status, b.status].sort()).toEqual([200, 503]);
    const failed = a.status === 503 ? a : b;
    expect(failed.headers.get("retry-after")).toBe("60");
    expect(((await failed.json()) as any).error.code).toBe("backend_unavailable");
    const lost = s.logs.find((l) => l.msg === "worker lost" && l.worker === target.workerId);
    expect(lost).toMatchObject({ kind: "text", failed_work: 1 });
    expect(lost!.reason).toContain("TypeError");
    // The pool replaces the worker; the model is back to operational and serves again.
    const twoReady = () => s.runtime.pool.stats().filter((w) => w.state === "ready").length === 2;
    await waitFor(() => s.deps.registry.healthOf(s.modelId).status === "operational" && twoReady(), { what: "the model operational on two ready workers" });
    const next = await post({ max_tokens: 3 });
    expect(next.status).toBe(200);
    const status = (await (await fetch(`${s.url}/v1/status`)).json()) as any;
    expect(status.model_statuses[0].status).toBe("operational");
  });

  test("restarting a busy worker fails its sequences retryably and never takes the process down", async () => {
    const held = post({ max_tokens: 3000, ignore_eos: true });
    await waitFor(() => s.runtime.scheduler.load().active === 1, { what: "the held sequence on a worker" });
    const busy = s.runtime.pool.stats().filter((w) => w.held === 1);
    expect(busy).toHaveLength(1);
    s.runtime.pool.restart(busy[0]!.workerId, "restarted by test");
    const res = await held;
    expect(res.status).toBe(503);
    // The client gets the fixed text; the operator's reason is in the log line of the request.
    expect(((await res.json()) as any).error.message).toBe("The model's worker was restarted; retry the request");
    expect(s.logs.find((l) => l.msg === "request failed" && l.cause === "worker_restarted")).toMatchObject({ model: s.modelId, detail: "restarted by test" });
    const twoReady = () => s.runtime.pool.stats().filter((w) => w.state === "ready").length === 2;
    await waitFor(twoReady, { what: "two ready workers" });
    // The restarted worker was replaced by a new one, not revived.
    expect(s.runtime.pool.stats().map((w) => w.workerId)).not.toContain(busy[0]!.workerId);
    expect((await post({ max_tokens: 3 })).status).toBe(200);
  });

  test("the non-streaming time limit gives 504 gateway_timeout; streams are not subject to it", async () => {
    const t = await startTestServer({ KILN_REQUEST_TIMEOUT_MS: "1000" });
    try {
      const slow = await fetch(`${t.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: t.modelId, messages: [{ role: "user", content: "go" }], max_tokens: 4000, temperature: 0, ignore_eos: true }),
      });
      expect(slow.status).toBe(504);
      expect(((await slow.json()) as any).error).toMatchObject({ type: "server_error", code: "gateway_timeout" });
      const stream = await streamChat(t.url, t.key, { model: t.modelId, messages: [{ role: "user", content: "go" }], max_tokens: 3000, ignore_eos: true });
      expect(stream.e2eMs).toBeGreaterThan(1000);
      expect(stream.outputTokens).toBe(3000);
    } finally {
      await t.stop(500);
    }
  });
});

describe("a model whose worker cannot start", () => {
  test("answers 503 backend_unavailable with Retry-After 60 at once, in every format; the other model still serves", async () => {
    // A second model next to the tiny one: same tokenizer and manifest, but weights ONNX Runtime cannot read.
    const modelsDir = tempDir();
    const good = await tinyModelDir();
    cpSync(good, join(modelsDir, basename(good)), { recursive: true });
    const broken = join(modelsDir, "kiln-broken-v1");
    cpSync(good, broken, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(broken, "kiln.json"), "utf8"));
    writeFileSync(join(broken, "kiln.json"), JSON.stringify({ ...manifest, id: "kiln-broken-v1" }));
    writeFileSync(join(broken, "onnx", "model.onnx"), "this is not an ONNX model");
    const t = await startTestServer({ KILN_MODELS_DIR: modelsDir });
    try {
      const key = { authorization: `Bearer ${t.key}`, "content-type": "application/json" };
      const bodies: [string, object][] = [
        ["/v1/chat/completions", { model: "kiln-broken-v1", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }],
        ["/v1/chat/completions", { model: "kiln-broken-v1", messages: [{ role: "user", content: "hi" }], max_tokens: 4, stream: true }],
        ["/v1/responses", { model: "kiln-broken-v1", input: "hi", max_output_tokens: 16 }],
        ["/v1/messages", { model: "kiln-broken-v1", messages: [{ role: "user", content: "hi" }], max_tokens: 4, stream: true }],
      ];
      for (const [path, body] of bodies) {
        const t0 = performance.now();
        const res = await fetch(`${t.url}${path}`, { method: "POST", headers: key, body: JSON.stringify(body) });
        expect(performance.now() - t0).toBeLessThan(2000);
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("60");
        expect(res.headers.get("retry-after-ms")).toBe("60000");
        const json = (await res.json()) as { error: { type: string; code: string } };
        expect(json.error).toMatchObject({ type: path === "/v1/messages" ? "overloaded_error" : "server_error", code: "backend_unavailable" });
      }
      const status = (await (await fetch(`${t.url}/v1/status`)).json()) as { model_statuses: { id: string; status: string }[] };
      expect(status.model_statuses.find((m) => m.id === "kiln-broken-v1")?.status).toBe("outage");
      const ok = await fetch(`${t.url}/v1/chat/completions`, {
        method: "POST", headers: key, body: JSON.stringify({ model: t.deps.registry.list().find((m) => m.id !== "kiln-broken-v1")!.id, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
      });
      expect(ok.status).toBe(200);
    } finally {
      await t.stop(500);
    }
  });
});
