// Embeddings request checks that answer before any model runs (no worker: a request past them gets 503): input shapes,
// empty and too many inputs, inputs past the context, encoding_format, dimensions the model was not trained for, the
// model's capability (a chat model asked for embeddings, an embedding model asked for chat), and key restrictions.
import { describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { createKey, restrictKey } from "../../src/db/keys-repo.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";
import { tinyEmbedModelDir } from "../helpers/tiny-model.ts";

const EMBED = "kiln-embed-tiny-v1";

describe("POST /v1/embeddings validation", async () => {
  const models = tempDir();
  writeFakeModel(models, "chat", fakeManifest("chat-check-v1"));
  const embedDir = await tinyEmbedModelDir();
  symlinkSync(embedDir, join(models, basename(embedDir)));
  const k = await testKiln({ modelsDir: models });
  const post = (json: Record<string, unknown>, key?: string) => k.req("/v1/embeddings", { method: "POST", key, json: { model: EMBED, input: "hello", ...json } });

  async function expect400(res: Response, param: string | null, message?: RegExp) {
    const body = (await res.json()) as { error: { type: string; param: string | null; message: string } };
    expect([res.status, body.error.type, body.error.param]).toEqual([400, "invalid_request_error", param]);
    if (message) expect(body.error.message).toMatch(message);
  }

  test("a valid request passes every check (this app has no worker: 503)", async () => {
    expect((await post({ input: ["a", "b"], encoding_format: "base64", dimensions: 32, user: "u-1" })).status).toBe(503);
    expect((await post({ input: [[5, 6, 7], [8]] })).status).toBe(503);
  });

  test("input shapes outside the format's four are a 400 naming input", async () => {
    for (const input of [{ text: "x" }, [1, "a"], 42, [[1, 2], {}], [-1], null]) {
      const res = await post({ input });
      const body = (await res.json()) as { error: { param: string; message: string } };
      expect([res.status, /^input(\.\d+)?$/.test(body.error.param), body.error.message]).toEqual([400, true, expect.stringMatching(/^input must be a string, an array of strings/)]);
    }
    await expect400(await k.req("/v1/embeddings", { method: "POST", json: { model: EMBED } }), "input", /Missing required parameter: 'input'/);
  });

  test("empty input, an empty string and more than 2048 inputs are 400s naming input", async () => {
    await expect400(await post({ input: [] }), "input", /must not be empty/);
    await expect400(await post({ input: "" }), "input", /input\[0\] is empty/);
    await expect400(await post({ input: ["a", ""] }), "input", /input\[1\] is empty/);
    await expect400(await post({ input: Array(2049).fill("a") }), "input", /2049 items.*at most 2048/);
  });

  test("an input longer than the model's context (512 tokens) or naming an unknown token is a 400 naming input", async () => {
    await expect400(await post({ input: [[5, 6], Array(513).fill(5)] }), "input", /input\[1\] is 513 tokens.*maximum context length is 512/);
    await expect400(await post({ input: "word ".repeat(600) }), "input", /maximum context length is 512/);
    expect((await post({ input: Array(512).fill(5) })).status).toBe(503);
    await expect400(await post({ input: [1, 2048] }), "input", /token id 2048.*ends at 2047/);
  });

  test("encoding_format is float or base64; dimensions only within the sizes the model was trained at", async () => {
    await expect400(await post({ encoding_format: "int8" }), "encoding_format", /float or base64/);
    await expect400(await post({ dimensions: 0 }), "dimensions", /at least 1/);
    await expect400(await post({ dimensions: 8 }), "dimensions", /from 16 to 64/);
    await expect400(await post({ dimensions: 65 }), "dimensions", /from 16 to 64/);
    expect((await post({ dimensions: 64 })).status).toBe(503);
  });

  test("a chat model asked for embeddings and the embedding model asked for chat or completions are 400s naming the capability", async () => {
    await expect400(await post({ model: "chat-check-v1" }), "model", /does not create embeddings: it has no embeddings capability/);
    const chat = await k.req("/v1/chat/completions", { method: "POST", json: { model: EMBED, messages: [{ role: "user", content: "hi" }] } });
    await expect400(chat, "model", /no chat capability \(it has the embeddings capability only/);
    await expect400(await k.req("/v1/completions", { method: "POST", json: { model: EMBED, prompt: "hi" } }), "model", /no chat capability/);
    expect((await post({ model: "no-such-model-v1" })).status).toBe(404);
  });

  test("GET /v1/models says which model makes embeddings, at what sizes", async () => {
    const list = (await (await k.req("/v1/models")).json()) as { data: { id: string; capabilities: Record<string, boolean>; embedding?: unknown }[] };
    const embed = list.data.find((m) => m.id === EMBED)!;
    expect(embed.capabilities).toMatchObject({ embeddings: true, chat: false, completions: false });
    expect(embed.embedding).toEqual({ dimensions: 64, dimensions_allowed: [16, 32, 64], pooling: "mean", normalized: true });
    expect(list.data.find((m) => m.id === "chat-check-v1")!.capabilities.embeddings).toBe(false);
  });

  test("a key restricted to chat may not call embeddings; one allowed embeddings may", async () => {
    const chatOnly = await createKey(k.deps.db, k.teamId, "chat only");
    await restrictKey(k.deps.db, chatOnly.id, { endpoints: ["chat"] });
    expect((await post({ input: "" }, chatOnly.key)).status).toBe(403);
    const allowed = await createKey(k.deps.db, k.teamId, "embeddings");
    await restrictKey(k.deps.db, allowed.id, { endpoints: ["embeddings"] });
    await expect400(await post({ input: "" }, allowed.key), "input");
  });
});
