// A stream's request log line says how it really ended (completed, client gone, error code) and its full duration.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop(1000));

function post(path: string, body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, ...body }),
    signal,
  });
}

async function lineOf(requestId: string) {
  return (await waitFor(() => s.logs.find((l) => l.msg === "request" && l.request_id === requestId), { what: `the request line of ${requestId}` }))!;
}

test("a stream read to its end logs completed with the whole duration, not the first byte's", async () => {
  const started = performance.now();
  const res = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 40, ignore_eos: true, stream: true });
  await res.text();
  const elapsed = performance.now() - started;
  const line = await lineOf(res.headers.get("x-request-id")!);
  expect(line).toMatchObject({ status: 200, stream: "completed", path: "/v1/chat/completions" });
  // The line is written at the end: its duration covers (nearly) the whole exchange.
  expect(line.duration_ms as number).toBeGreaterThan(elapsed * 0.5);
});

test("a client that leaves mid-stream is logged as client_gone; a Responses stream too", async () => {
  for (const [path, body] of [
    ["/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 3000, ignore_eos: true, stream: true }],
    ["/v1/responses", { input: "hi", max_output_tokens: 3000, stream: true }],
  ] as const) {
    const abort = new AbortController();
    const res = await post(path, body, abort.signal);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    abort.abort();
    await reader.closed.catch(() => {});
    expect(await lineOf(res.headers.get("x-request-id")!)).toMatchObject({ stream: "client_gone" });
  }
});

test("a stream that ends with an error logs its code", async () => {
  const res = await post("/v1/responses", { input: "Hello", max_output_tokens: 3000, stream: true, temperature: 0 });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  // Generating (not just created): the sequence sits on a worker.
  for (let text = ""; !text.includes("response.output_text.delta"); ) text += dec.decode((await reader.read()).value);
  for (const w of s.runtime.pool.stats().filter((w) => w.held > 0)) s.runtime.pool.restart(w.workerId, "killed by test");
  while (!(await reader.read()).done);
  expect(await lineOf(res.headers.get("x-request-id")!)).toMatchObject({ stream: "error", error_code: "backend_unavailable" });
});
