// Legacy completions request checks that answer before any model runs (no worker needed): the fields kiln refuses
// (suffix, best_of other than n, max_tokens 0 without echo, prompt scoring on a GPU model) and the prompt shapes the
// format does not have.
import { describe, expect, test } from "bun:test";
import { createKey, restrictKey } from "../../src/db/keys-repo.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

describe("POST /v1/completions validation", async () => {
  const models = tempDir();
  writeFakeModel(models, "m", fakeManifest("completions-check-v1"));
  const k = await testKiln({ modelsDir: models });
  const post = (json: Record<string, unknown>) => k.req("/v1/completions", { method: "POST", json: { model: "completions-check-v1", prompt: "Once", ...json } });

  async function expect400(res: Response, param: string | null, message?: RegExp) {
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; param: string | null; message: string } };
    expect([body.error.type, body.error.param]).toEqual(["invalid_request_error", param]);
    if (message) expect(body.error.message).toMatch(message);
  }

  test("suffix is refused naming it: no model has a fill-in-the-middle template", async () => {
    await expect400(await post({ suffix: " the end." }), "suffix", /fill-in-the-middle/);
  });

  test("best_of other than n is refused; equal to n it is accepted past validation", async () => {
    await expect400(await post({ best_of: 3 }), "best_of", /must equal n \(1\)/);
    await expect400(await post({ best_of: 2, n: 3 }), "best_of", /must equal n \(3\)/);
    // This app has no backend: a request past validation reaches it and gets 503, not 400.
    expect((await post({ best_of: 2, n: 2 })).status).toBe(503);
  });

  test("max_tokens 0 is for echo only; echo with logprobs (or max_tokens 0) passes validation on a CPU model", async () => {
    await expect400(await post({ max_tokens: 0 }), "max_tokens", /only for echo/);
    await expect400(await post({ max_tokens: -1, echo: true }), "max_tokens", /at least 0/);
    // This app has no backend: a request past validation reaches it and gets 503, not 400.
    expect((await post({ echo: true, logprobs: 1 })).status).toBe(503);
    expect((await post({ echo: true, max_tokens: 0 })).status).toBe(503);
  });

  test("a model on the GPU cannot score a prompt: echo with logprobs or max_tokens 0 is a 400 naming echo", async () => {
    const entry = k.deps.registry.get("completions-check-v1")!;
    entry.placement = { device: "webgpu", dtype: "q4f16", reason: "test" };
    try {
      await expect400(await post({ echo: true, logprobs: 1 }), "echo", /GPU.*last position/);
      await expect400(await post({ echo: true, max_tokens: 0 }), "echo", /GPU/);
      // Plain echo and plain logprobs need no prompt scoring: past validation as on the CPU.
      expect((await post({ echo: true })).status).toBe(503);
      expect((await post({ logprobs: 1 })).status).toBe(503);
    } finally {
      delete entry.placement;
    }
  });

  test("logprobs is a whole number from 0 to 5", async () => {
    await expect400(await post({ logprobs: 6 }), "logprobs", /0 to 5/);
    await expect400(await post({ logprobs: true }), "logprobs", /0 to 5/);
  });

  test("prompt shapes outside the format's four are a 400 naming prompt", async () => {
    for (const prompt of [{ text: "x" }, [1, "a"], [], [[]], [-1], 42, [[1, 2], {}]]) {
      const res = await post({ prompt });
      const body = (await res.json()) as { error: { param: string; message: string } };
      // An array's bad item is named by its path (prompt.0), as every family names a field inside an array.
      expect([res.status, /^prompt(\.0)?$/.test(body.error.param), body.error.message]).toEqual([400, true, expect.stringMatching(/^prompt must be a string, an array of strings, an array of token ids/)]);
    }
    await expect400(await k.req("/v1/completions", { method: "POST", json: { model: "completions-check-v1" } }), "prompt", /Missing required parameter: 'prompt'/);
  });

  test("an unknown model is a 404; logit_bias keys are token ids", async () => {
    const res = await post({ model: "no-such-model" });
    expect(res.status).toBe(404);
    await expect400(await post({ logit_bias: { abc: 1 } }), "logit_bias");
  });

  test("a key restricted to chat may not call completions; one allowed completions may", async () => {
    const chatOnly = await createKey(k.deps.db, k.teamId, "chat only");
    await restrictKey(k.deps.db, chatOnly.id, { endpoints: ["chat"] });
    expect((await k.req("/v1/completions", { method: "POST", key: chatOnly.key, json: { model: "completions-check-v1", prompt: "x", suffix: "y" } })).status).toBe(403);
    const allowed = await createKey(k.deps.db, k.teamId, "completions");
    await restrictKey(k.deps.db, allowed.id, { endpoints: ["completions"] });
    await expect400(await k.req("/v1/completions", { method: "POST", key: allowed.key, json: { model: "completions-check-v1", prompt: "x", suffix: "y" } }), "suffix");
  });
});
