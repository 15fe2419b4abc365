// SIGTERM drains a real kiln process: the listener stays open, new requests (new and kept-alive connections) get
// 503 server_shutting_down with Retry-After and Connection: close, the status page says it is not alive, running
// work gets the grace period, streams still running then end with their format's error event, and the process
// exits 0 when the work is done, or within the grace period plus one second.
import { describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { parsePrometheusText, samplesOf } from "../helpers/prom-text.ts";
import { httpRequest, RawConnection, rawRequest, type RawResponse } from "../helpers/raw-http.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

async function start(graceMs: number, more: Record<string, string> = {}): Promise<{ server: ServerProcess; port: number; model: string }> {
  const env = { KILN_SHUTDOWN_GRACE_MS: String(graceMs), KILN_THREADS: "1", ...more };
  const server = await startServerProcess({ dataDir: tempDir(), modelsDir: dirname(await tinyModelDir()), env });
  const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } });
  const model = ((await models.json()) as { data: { id: string }[] }).data[0]!.id;
  return { server, port: Number(new URL(server.url).port), model };
}

/** A streaming chat that has produced its first chunk; `rest` reads it to the end. */
async function runningStream(s: { server: ServerProcess; model: string }, maxTokens: number) {
  const res = await fetch(`${s.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.model, messages: [{ role: "user", content: "count" }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  return {
    async rest(): Promise<string> {
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
      return text;
    },
  };
}

/** Resolves once the process has taken the signal: its status page (which stays up while it drains) says it is not alive. */
async function draining(server: ServerProcess): Promise<void> {
  const alive = async () => ((await (await fetch(`${server.url}/v1/status`)).json()) as { is_alive: boolean }).is_alive;
  await waitFor(alive, { what: "the status page to say the server is draining", until: (a) => !a });
}

function expectShuttingDown(res: RawResponse) {
  expect(res.status).toBe(503);
  expect(JSON.parse(res.body)).toEqual({
    error: { message: expect.any(String), type: "server_error", param: null, code: "server_shutting_down" },
  });
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers["retry-after"])).toBeLessThanOrEqual(10);
  expect(res.headers.connection).toBe("close");
}

describe("SIGTERM drain", () => {
  test("with a drain notice, is_alive turns false at once while new requests are still served; after it they get 503; exit 0", async () => {
    const s = await start(5000, { KILN_DRAIN_NOTICE_MS: "4000" });
    const models = () => rawRequest(s.port, httpRequest("GET", "/v1/models", { headers: { authorization: `Bearer ${s.server.key}` } }));
    // A stream far longer than the notice and the grace together, however fast the box decodes, keeps the drain (and
    // the process) going past the notice: a shorter one may end first on an idle box, and the process with it.
    const stream = await runningStream(s, 100_000);
    const exited = s.server.stop();
    await draining(s.server);
    // What a load balancer's health check sees now takes the replica out; until then, what it still sends is served.
    expect((await models()).status).toBe(200);
    expectShuttingDown(await waitFor(models, { what: "the drain after the notice", until: (r) => r.status === 503, timeoutMs: 10_000 }));
    await stream.rest();
    expect(await exited).toBe(0);
  }, 60_000);

  test("new requests get 503 server_shutting_down on kept-alive and new connections; running work finishes; exit 0", async () => {
    const s = await start(15_000);
    const keyed = { authorization: `Bearer ${s.server.key}` };
    const kept = await RawConnection.open(s.port);
    kept.write(httpRequest("GET", "/v1/status"));
    expect((await kept.read()).status).toBe(200);
    const stream = await runningStream(s, 1200);

    const t0 = performance.now();
    const exited = s.server.stop();
    await draining(s.server);

    kept.write(httpRequest("GET", "/v1/models", { headers: keyed }));
    expectShuttingDown(await kept.read());
    expect(await kept.waitClosed(2000)).toBe(true);

    const body = JSON.stringify({ model: s.model, messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
    expectShuttingDown(await rawRequest(s.port, httpRequest("POST", "/v1/chat/completions", { headers: { ...keyed, "content-type": "application/json" }, body })));
    const status = await rawRequest(s.port, httpRequest("GET", "/v1/status"));
    expect(status.status).toBe(200);
    expect(status.headers.connection).toBe("close");
    expect(JSON.parse(status.body)).toMatchObject({ is_alive: false, service_message: expect.stringContaining("shutting down") });

    const text = await stream.rest();
    expect(text).toContain('"finish_reason":"length"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await exited).toBe(0);
    // It exited once the work was done, well before the 15 s grace period.
    expect(performance.now() - t0).toBeLessThan(12_000);
  });

  test("work still running when the grace period ends gets the server_shutting_down frame; exit 0", async () => {
    const s = await start(1000);
    const stream = await runningStream(s, 4000);
    const t0 = performance.now();
    const exited = s.server.stop();
    const text = await stream.rest();
    expect(text).toContain('"code":"server_shutting_down"');
    expect(await exited).toBe(0);
    expect(performance.now() - t0).toBeGreaterThan(900);
    expect(performance.now() - t0).toBeLessThan(6000);
  });
});

/** The three generation formats: a body for each, streaming or not, on a prompt the tiny model never ends. */
const FORMATS = {
  chat: {
    path: "/v1/chat/completions",
    body: (model: string, maxTokens: number, stream: boolean) =>
      ({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: maxTokens, temperature: 0, ignore_eos: true, stream }),
  },
  responses: {
    path: "/v1/responses",
    body: (model: string, maxTokens: number, stream: boolean) => ({ model, input: "Hello", max_output_tokens: maxTokens, temperature: 0, stream }),
  },
  messages: {
    path: "/v1/messages",
    body: (model: string, maxTokens: number, stream: boolean) => ({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: maxTokens, temperature: 0, stream }),
  },
} as const;
type Format = keyof typeof FORMATS;

/** SSE text as frames: the `event:` line (if any) and the parsed `data:` payload (or the literal, for [DONE]). */
function sseFrames(text: string): { event?: string; data: any }[] {
  return text.trim().split("\n\n").filter((block) => !block.startsWith(":")).map((block) => {
    const lines = block.split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return { event, data: data === "[DONE]" ? data : JSON.parse(data) };
  });
}

describe("SIGTERM during a mix of streaming and non-streaming requests in every format", () => {
  test("short requests finish, streams end with their format's server_shutting_down event, new requests get 503 + Retry-After, exit 0 in time", async () => {
    const graceMs = 4000;
    const s = await start(graceMs);
    const send = (format: Format, maxTokens: number, stream: boolean) =>
      fetch(`${s.server.url}${FORMATS[format].path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.server.key}`, "content-type": "application/json" },
        body: JSON.stringify(FORMATS[format].body(s.model, maxTokens, stream)),
      });
    const formats = Object.keys(FORMATS) as Format[];

    // One long stream per format, each past its first frame.
    const streams = await Promise.all(formats.map(async (format) => {
      const res = await send(format, 4000, true);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      return {
        format,
        async rest() {
          for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
          return text;
        },
      };
    }));
    // One short non-streaming request per format (well within the grace period), and one long one that is not.
    const shortDone: Record<string, number> = {};
    const shorts = formats.map((format) => send(format, 120, false).then(async (res) => {
      shortDone[format] = performance.now();
      return { format, status: res.status, body: (await res.json()) as any };
    }));
    const long = send("chat", 4000, false).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as any }));

    // SIGTERM once all seven are in the worker's batch (the /metrics gauge says so).
    const inBatch = async () => samplesOf(parsePrometheusText(await (await fetch(`${s.server.url}/metrics`)).text()), "kiln_worker_batch_size").reduce((n, x) => n + x.value, 0);
    await waitFor(inBatch, { what: "all seven requests in the worker's batch", until: (n) => n === 7 });
    const killedAt = performance.now();
    process.kill(s.server.pid, "SIGTERM");
    const exited = s.server.stop().then((code) => ({ code, ms: performance.now() - killedAt }));
    await draining(s.server);

    // New requests, in every format: 503 server_shutting_down with a Retry-After of a few seconds.
    for (const format of formats) {
      const res = await send(format, 8, false);
      expect(res.status).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(10);
      expect(Number(res.headers.get("retry-after-ms"))).toBe(Number(res.headers.get("retry-after")) * 1000);
      const error = { message: expect.any(String), type: "server_error", param: null, code: "server_shutting_down" };
      // Messages answers in Anthropic's envelope, with its error type for a 503.
      expect(await res.json()).toEqual(format === "messages" ? { type: "error", error: { ...error, type: "overloaded_error" } } : { error });
    }
    const status = (await (await fetch(`${s.server.url}/v1/status`)).json()) as { is_alive: boolean };
    expect(status.is_alive).toBe(false);

    // The short ones were still running at SIGTERM, and finished normally within the grace period.
    for (const r of await Promise.all(shorts)) {
      expect(r.status).toBe(200);
      expect(shortDone[r.format]!).toBeGreaterThan(killedAt);
      expect(shortDone[r.format]! - killedAt).toBeLessThan(graceMs);
      if (r.format === "chat") expect(r.body.choices[0].finish_reason).toBe("length");
      if (r.format === "responses") expect([r.body.status, r.body.incomplete_details]).toEqual(["incomplete", { reason: "max_output_tokens" }]);
      if (r.format === "messages") expect([r.body.stop_reason, r.body.usage.output_tokens]).toEqual(["max_tokens", 120]);
    }
    // The long non-streaming one outlived the grace period: a retryable 503 server_shutting_down.
    const l = await long;
    expect(l.status).toBe(503);
    expect(l.body.error.code).toBe("server_shutting_down");
    expect(Number(l.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    // Each stream ends with its own format's error event carrying server_shutting_down, and nothing after it.
    for (const stream of streams) {
      const frames = sseFrames(await stream.rest());
      const last = frames.at(-1)!;
      if (stream.format === "chat") {
        // Chat: a data payload with an error object, and no [DONE].
        expect(last.event).toBeUndefined();
        expect(last.data).toEqual({ error: { message: expect.any(String), type: "server_error", param: null, code: "server_shutting_down" } });
        expect(frames.some((f) => f.data === "[DONE]")).toBe(false);
      } else if (stream.format === "responses") {
        // Responses: the top-level `error` event (code and message at the top, not inside a response object).
        expect(last.event).toBe("error");
        expect(last.data).toMatchObject({ type: "error", code: "server_shutting_down", message: expect.any(String), param: null });
        expect(frames.some((f) => f.event === "response.completed")).toBe(false);
      } else {
        // Messages: Anthropic's `event: error` with the error object inside, and no message_stop.
        expect(last.event).toBe("error");
        expect(last.data).toEqual({ type: "error", error: { type: "overloaded_error", code: "server_shutting_down", message: expect.any(String), param: null } });
        expect(frames.some((f) => f.event === "message_stop")).toBe(false);
      }
    }

    const { code, ms } = await exited;
    expect(code).toBe(0);
    // Not before the grace period (the long requests were running), and within it plus one second.
    expect(ms).toBeGreaterThan(graceMs - 100);
    expect(ms).toBeLessThan(graceMs + 1000);
  });
});
