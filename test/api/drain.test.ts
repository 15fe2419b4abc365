// SIGTERM drains a real kiln process: the listener stays open, new requests (new and kept-alive connections) get
// 503 server_shutting_down with Retry-After and Connection: close, the status page says it is not alive, running
// work gets the grace period, and the process exits 0 when the work is done or the grace period ends.
import { describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { httpRequest, RawConnection, rawRequest, type RawResponse } from "../helpers/raw-http.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

async function start(graceMs: number): Promise<{ server: ServerProcess; port: number; model: string }> {
  const env = { KILN_SHUTDOWN_GRACE_MS: String(graceMs), KILN_THREADS: "1" };
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
  test("new requests get 503 server_shutting_down on kept-alive and new connections; running work finishes; exit 0", async () => {
    const s = await start(15_000);
    const keyed = { authorization: `Bearer ${s.server.key}` };
    const kept = await RawConnection.open(s.port);
    kept.write(httpRequest("GET", "/v1/status"));
    expect((await kept.read()).status).toBe(200);
    const stream = await runningStream(s, 1200);

    const t0 = performance.now();
    const exited = s.server.stop();
    await Bun.sleep(200);

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
