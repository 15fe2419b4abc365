// What hostile traffic costs a real kiln process: RSS for a 512 MiB body, /v1/status latency while a maximal prompt
// is refused, and how long half-sent and idle connections are held. Measured on a separate process (its own RSS).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { chunkedUpload, halfSent, rssGrowth, statusLatencyApart } from "../helpers/hostile-clients.ts";
import { tempDir } from "../helpers/kiln.ts";
import { RawConnection, httpRequest } from "../helpers/raw-http.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const MiB = 1024 * 1024;
let server: ServerProcess;
let model = "";
beforeAll(async () => {
  // The JSON limit at 4 MiB (the default leaves room for 50 MB of inline media): what is measured is that nothing past it is kept.
  const env = { KILN_BODY_TIMEOUT_MS: "1500", KILN_IDLE_TIMEOUT_S: "1", KILN_THREADS: "1", KILN_MAX_BODY_BYTES: String(4 * MiB) };
  server = await startServerProcess({ dataDir: tempDir(), modelsDir: dirname(await tinyModelDir()), env });
  const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } });
  model = ((await models.json()) as { data: { id: string }[] }).data[0]!.id;
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

describe("edge limits on a real process", () => {
  test("a 512 MiB body without a key: 401 at once, RSS grows by less than 32 MiB", async () => {
    const { result, growthMb } = await rssGrowth(server.pid, () => chunkedUpload(server.url, "/v1/chat/completions", 512 * MiB));
    expect(result).toMatch(/^HTTP\/1\.1 (401|413) /);
    expect(growthMb).toBeLessThan(32);
  });

  test("a 512 MiB body with a key: 413 while reading (the limit at 4 MiB), RSS grows by less than 32 MiB", async () => {
    const auth = { authorization: `Bearer ${server.key}` };
    const { result, growthMb } = await rssGrowth(server.pid, () => chunkedUpload(server.url, "/v1/chat/completions", 512 * MiB, auth));
    expect(result).toMatch(/^HTTP\/1\.1 413 /);
    expect(growthMb).toBeLessThan(32);
  });

  test("/v1/status answers within 50 ms while a maximal prompt is refused", async () => {
    const post = (body: string | Uint8Array) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error: { message: string } } }));
    const content = "word ".repeat(Math.floor((4 * MiB - 500) / 5));
    const body = new TextEncoder().encode(JSON.stringify({ model, messages: [{ role: "user", content }] }));
    expect(body.length).toBeLessThan(4 * MiB);
    // First uses (the chat template's compile, the JIT on this path: about 40 ms once after start) are not measured.
    expect((await post(JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }))).status).toBe(200);
    expect((await post(body)).status).toBe(400);
    for (let round = 0; round < 3; round++) {
      const { result, worstMs, polls } = await statusLatencyApart(server.url, () => post(body));
      expect(result.status).toBe(400);
      expect(result.body.error.message).toMatch(/maximum context length is \d+ tokens.*at least \d+ in the input/);
      expect(polls).toBeGreaterThan(3);
      expect(worstMs).toBeLessThan(50);
    }
  });

  test("half-sent and idle connections are not held: a stalled body closes at the body timeout, the rest at the idle timeout", async () => {
    // Refused without a key, the unread rest is discarded as it arrives (the client still sees its 401, no buffering);
    // a client that stops sending is closed by the idle timeout (1 s here; Bun checks every few seconds).
    const port = Number(new URL(server.url).port);
    const idle = await RawConnection.open(port);
    idle.write(httpRequest("GET", "/v1/status"));
    expect((await idle.read()).status).toBe(200);
    // Generation lifts the idle timeout while it runs (a stream may pause); it comes back once the answer is complete.
    const afterChat = await RawConnection.open(port);
    const afterStream = await RawConnection.open(port);
    const chat = (stream: boolean) =>
      httpRequest("POST", "/v1/chat/completions", {
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2, stream }),
      });
    afterChat.write(chat(false));
    afterStream.write(chat(true));
    expect((await afterChat.read()).status).toBe(200);
    const streamed = await afterStream.read();
    expect(streamed.status).toBe(200);
    expect(streamed.body).toContain("data: [DONE]");
    const [unkeyed, keyed, ...closed] = await Promise.all([
      halfSent(server.url, 100, 7000),
      halfSent(server.url, 100, 3000, { key: server.key }),
      idle.waitClosed(7000),
      afterChat.waitClosed(7000),
      afterStream.waitClosed(7000),
    ]);
    expect(keyed).toBe(0);
    expect(unkeyed).toBe(0);
    expect(closed).toEqual([true, true, true]);
  });

  test("a stalled body gets 408 in the spec's shape and the connection closes", async () => {
    const conn = await RawConnection.open(Number(new URL(server.url).port));
    conn.write(httpRequest("POST", "/v1/chat/completions", { headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json", "content-length": "100" } }) + '{"mo');
    const res = await conn.read(5000);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body).error).toMatchObject({ type: "invalid_request_error", param: null });
    expect(await conn.waitClosed(2000)).toBe(true);
  });
});
