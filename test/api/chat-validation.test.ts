// Chat request checks that answer before any model runs (no worker needed).
import { describe, expect, test } from "bun:test";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

describe("POST /v1/chat/completions validation", async () => {
  const models = tempDir();
  writeFakeModel(models, "m", fakeManifest("chat-check-v1"));
  const k = await testKiln({ modelsDir: models });
  const post = (json: unknown) => k.req("/v1/chat/completions", { method: "POST", json });
  const user = [{ role: "user", content: "hi" }];

  async function expect400(res: Response, param: string | null, message?: string | RegExp) {
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.param).toBe(param);
    if (message) expect(body.error.message).toMatch(message);
    return body;
  }

  test("invalid JSON is a 400 in the error shape", async () => {
    const res = await k.req("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: '{"model": "x", ' });
    await expect400(res, null, /not valid JSON/);
  });

  test("missing model and missing messages", async () => {
    await expect400(await post({ messages: user }), "model", "Missing required parameter: 'model'.");
    await expect400(await post({ model: "chat-check-v1" }), "messages", "Missing required parameter: 'messages'.");
    await expect400(await post({ model: "chat-check-v1", messages: [] }), "messages", /non-empty/);
  });

  test("a schema failure names the failing field's dotted path", async () => {
    await expect400(await post({ model: "chat-check-v1", messages: [{ role: "user", content: 42 }] }), "messages.0.content", /content must be a string/);
  });

  test("temperature 0–2 and 0 < top_p ≤ 1 (0 rejected)", async () => {
    await expect400(await post({ model: "chat-check-v1", messages: user, temperature: 2.5 }), "temperature", "temperature must be a number between 0 and 2");
    await expect400(await post({ model: "chat-check-v1", messages: user, temperature: -0.1 }), "temperature");
    await expect400(await post({ model: "chat-check-v1", messages: user, top_p: 0 }), "top_p", "top_p must be greater than 0 and at most 1");
    await expect400(await post({ model: "chat-check-v1", messages: user, top_p: 1.01 }), "top_p");
  });

  test("unknown model is 404 model_not_found", async () => {
    const res = await post({ model: "nope-model-v1", messages: user });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error).toMatchObject({ code: "model_not_found", type: "invalid_request_error" });
  });

  test("an assistant tool call without its tool message is a 400", async () => {
    const messages = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "w", arguments: "{}" } }] },
      { role: "user", content: "well?" },
    ];
    await expect400(await post({ model: "chat-check-v1", messages }), "messages.1.tool_calls", /call_1/);
  });

  test("auth comes before the body: no key is 401 even for a bad body", async () => {
    const res = await k.req("/v1/chat/completions", { method: "POST", json: { nonsense: true }, key: null });
    expect(res.status).toBe(401);
  });

  test("without a running worker the answer is a retryable 503 with Retry-After", async () => {
    const res = await post({ model: "chat-check-v1", messages: user });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(((await res.json()) as any).error).toMatchObject({ type: "server_error", code: "backend_unavailable" });
  });

  test("n above KILN_MAX_QUEUE is a 400 (it could never be admitted), not a 503 to retry", async () => {
    const small = await testKiln({ modelsDir: models, env: { KILN_MAX_QUEUE: "2" } });
    const res = await small.req("/v1/chat/completions", { method: "POST", json: { model: "chat-check-v1", messages: user, n: 3 } });
    await expect400(res, "n", /at most 2 generations at once/);
  });

  test("while draining, new requests get 503 server_shutting_down", async () => {
    k.deps.shutdown.draining = true;
    const res = await post({ model: "chat-check-v1", messages: user });
    k.deps.shutdown.draining = false;
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.code).toBe("server_shutting_down");
  });
});
