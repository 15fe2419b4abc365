// A request's log line says why it failed (the error's type, code, param and message, never the body), and a stream's
// how it really ended (completed, client gone, error code) and its full duration.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop(1000));

function post(path: string, body: Record<string, unknown>, signal?: AbortSignal, key = s.key) {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
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
    ["/v1/responses", { input: "Hello", temperature: 0, max_output_tokens: 3000, stream: true }],
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

test("a 4xx's line carries the error's type, code, param and message as the client got them, in every family, never the body", async () => {
  const secret = "do-not-log-this-prompt";
  const cases: [Response, Record<string, unknown>][] = [
    [
      await post("/v1/chat/completions", { messages: [{ role: "user", content: secret }], temperature: 5 }),
      { status: 400, error_type: "invalid_request_error", error_code: null, error_param: "temperature", error_message: "temperature must be a number between 0 and 2" },
    ],
    [
      await post("/v1/responses", { input: secret, model: "nope-v9" }),
      { status: 404, error_type: "invalid_request_error", error_code: "model_not_found", error_param: "model", error_message: "The model 'nope-v9' does not exist" },
    ],
    [
      // Messages logs Anthropic's error type, as its envelope sent it.
      await post("/v1/messages", { max_tokens: 4, messages: [{ role: "assistant", content: secret }] }),
      { status: 400, error_type: "invalid_request_error", error_param: "messages.0.role" },
    ],
    [await post("/v1/messages", { max_tokens: 4, messages: [{ role: "user", content: secret }] }, undefined, "LLM|1|wrong"), { status: 401, error_type: "authentication_error", error_code: "invalid_api_key" }],
  ];
  for (const [res, expected] of cases) {
    expect(res.status).toBe(expected.status as number);
    const line = await lineOf(res.headers.get("x-request-id")!);
    expect(line).toMatchObject(expected);
    expect(typeof line.error_message).toBe("string");
    expect(JSON.stringify(line)).not.toContain(secret);
  }
  // A success carries no error fields (this runs before a test below restarts the workers).
  const ok = await post("/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
  expect([ok.status, await ok.text()]).toEqual([200, expect.any(String)]);
  expect(Object.keys(await lineOf(ok.headers.get("x-request-id")!)).filter((k) => k.startsWith("error"))).toEqual([]);
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
