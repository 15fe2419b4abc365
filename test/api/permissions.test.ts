// Permissions through the app: keys and teams restricted to models and endpoint families, 403 in the spec's shape,
// the model list filtered, and every change applied on the very next request.
import { describe, expect, test } from "bun:test";
import { createKey, restrictKey, revokeKey } from "../../src/db/keys-repo.ts";
import { updateTeam } from "../../src/db/teams-repo.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

describe("permissions", async () => {
  const dir = tempDir();
  writeFakeModel(dir, "a", fakeManifest("alpha-model-v1"));
  writeFakeModel(dir, "b", fakeManifest("beta-model-v2"));
  const k = await testKiln({ modelsDir: dir });
  const chat = (model: string, key = k.key) =>
    k.req("/v1/chat/completions", { method: "POST", key, json: { model, messages: [{ role: "user", content: "hi" }], max_tokens: 16 } });
  const listed = async (key: string) => ((await (await k.req("/v1/models", { key })).json()) as { data: { id: string }[] }).data.map((m) => m.id);

  test("a key restricted to one model: 403 naming the other model, and the list shows only its model", async () => {
    const only = await createKey(k.deps.db, k.teamId, "alpha only");
    await restrictKey(k.deps.db, only.id, { models: ["alpha-model-v1"] });
    const res = await chat("beta-model-v2", only.key);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: { message: "This API key may not use the model 'beta-model-v2'.", type: "permission_error", param: "model", code: null },
    });
    expect(await listed(only.key)).toEqual(["alpha-model-v1"]);
    expect((await k.req("/v1/models/beta-model-v2", { key: only.key })).status).toBe(403);
    expect((await k.req("/v1/models/alpha-model-v1", { key: only.key })).status).toBe(200);
    // Its own model passes the gate (and reaches the backend, which this app has none of: 503, not 403).
    expect((await chat("alpha-model-v1", only.key)).status).toBe(503);
    // A model that does not exist is refused the same way: the 403 does not tell which models exist.
    expect((await chat("gamma-model-v9", only.key)).status).toBe(403);
    // The unrestricted key of the same team is unaffected.
    expect(await listed(k.key)).toEqual(["alpha-model-v1", "beta-model-v2"]);
  });

  test("counting endpoints are refused the same way (the model is in every JSON body)", async () => {
    const only = await createKey(k.deps.db, k.teamId, "alpha count");
    await restrictKey(k.deps.db, only.id, { models: ["alpha-model-v1"] });
    const res = await k.req("/v1/messages/count_tokens", { method: "POST", key: only.key, json: { model: "beta-model-v2", messages: [{ role: "user", content: "hi" }] } });
    expect(res.status).toBe(403);
    // The Messages envelope: Anthropic's clients read type "error" and the error's type.
    expect(await res.json()).toEqual({ type: "error", error: { type: "permission_error", message: "This API key may not use the model 'beta-model-v2'.", param: "model", code: null } });
  });

  test("endpoint families: a key limited to chat gets 403 on messages and responses, before its body is read", async () => {
    const chatOnly = await createKey(k.deps.db, k.teamId, "chat only");
    await restrictKey(k.deps.db, chatOnly.id, { endpoints: ["chat"] });
    const res = await k.req("/v1/responses", { method: "POST", key: chatOnly.key, headers: { "content-type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error).toEqual({ message: "This API key may not use the responses endpoints (/v1/responses).", type: "permission_error", param: null, code: null });
    expect((await k.req("/v1/messages", { method: "POST", key: chatOnly.key, json: {} })).status).toBe(403);
    // The model list is not an endpoint family: a restricted key still lists (its) models.
    expect((await k.req("/v1/models", { key: chatOnly.key })).status).toBe(200);
    expect((await chat("alpha-model-v1", chatOnly.key)).status).toBe(503);
  });

  test("images: a key without the images family gets 403 on both endpoints; a model named inside an edit's form is checked too", async () => {
    const chatOnly = await createKey(k.deps.db, k.teamId, "no images");
    await restrictKey(k.deps.db, chatOnly.id, { endpoints: ["chat"] });
    const gen = await k.req("/v1/images/generations", { method: "POST", key: chatOnly.key, json: { model: "alpha-model-v1", prompt: "x" } });
    expect([gen.status, ((await gen.json()) as any).error.message]).toEqual([403, "This API key may not use the images endpoints (/v1/images/generations)."]);
    const form = new FormData();
    form.append("model", "beta-model-v2");
    form.append("prompt", "x");
    form.append("image", new Blob([new Uint8Array(8)]), "a.png");
    expect((await k.req("/v1/images/edits", { method: "POST", key: chatOnly.key, body: form })).status).toBe(403);
    const alphaOnly = await createKey(k.deps.db, k.teamId, "alpha images");
    await restrictKey(k.deps.db, alphaOnly.id, { models: ["alpha-model-v1"] });
    const edit = await k.req("/v1/images/edits", { method: "POST", key: alphaOnly.key, body: form });
    expect([edit.status, ((await edit.json()) as any).error]).toEqual([403, { message: "This API key may not use the model 'beta-model-v2'.", type: "permission_error", param: "model", code: null }]);
  });

  test("team restrictions bound every key of the team; changes and revocation apply on the very next request", async () => {
    const kk = await testKiln({ modelsDir: dir });
    const second = await createKey(kk.deps.db, kk.teamId, "second");
    expect((await kk.req("/v1/models/beta-model-v2", { key: second.key })).status).toBe(200);
    await updateTeam(kk.deps.db, kk.teamId, { allowedModels: ["alpha-model-v1"] });
    const refused = await kk.req("/v1/models/beta-model-v2", { key: second.key });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.message).toBe("Your team may not use the model 'beta-model-v2'.");
    expect(await (async () => ((await (await kk.req("/v1/models")).json()) as any).data.map((m: any) => m.id))()).toEqual(["alpha-model-v1"]);
    await updateTeam(kk.deps.db, kk.teamId, { allowedEndpoints: ["responses"] });
    expect((await kk.req("/v1/chat/completions", { method: "POST", json: {} })).status).toBe(403);
    await updateTeam(kk.deps.db, kk.teamId, { allowedModels: null, allowedEndpoints: null });
    expect((await kk.req("/v1/models/beta-model-v2", { key: second.key })).status).toBe(200);
    await revokeKey(kk.deps.db, second.id);
    expect((await kk.req("/v1/models", { key: second.key })).status).toBe(401);
    expect((await kk.req("/v1/models")).status).toBe(200);
  });
});
