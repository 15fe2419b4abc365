// Responses request checks that answer before any model runs (no worker needed).
import { describe, expect, test } from "bun:test";
import { loadServerSecret } from "../../src/crypto/server-secret.ts";
import { insertResponse } from "../../src/db/responses-repo.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";
import { madeByV1 } from "../helpers/v1-seal.ts";

describe("POST /v1/responses validation", async () => {
  const models = tempDir();
  writeFakeModel(models, "m", fakeManifest("resp-check-v1"));
  writeFakeModel(models, "p", fakeManifest("plain-check-v1", { capabilities: { chat: true } }));
  const k = await testKiln({ modelsDir: models });
  const post = (json: Record<string, unknown>, path = "/v1/responses") => k.req(path, { method: "POST", json: { model: "resp-check-v1", input: "hi", ...json } });

  async function expect400(res: Response, param: string | null, message?: string | RegExp) {
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.param).toBe(param);
    if (message) expect(body.error.message).toMatch(message);
  }

  test("field ranges name their param: max_output_tokens ≥ 16, temperature 0–2, 0 < top_p ≤ 1", async () => {
    await expect400(await post({ max_output_tokens: 15 }), "max_output_tokens", "max_output_tokens must be a whole number of at least 16");
    await expect400(await post({ temperature: 2.1 }), "temperature");
    await expect400(await post({ top_p: 0 }), "top_p", "top_p must be greater than 0 and at most 1");
    await expect400(await post({ input: 7 }), "input");
  });

  test("unknown model is 404 model_not_found; the same for input_tokens", async () => {
    for (const path of ["/v1/responses", "/v1/responses/input_tokens"]) {
      const res = await post({ model: "nope-v9" }, path);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error).toMatchObject({ code: "model_not_found", param: "model" });
    }
  });

  test("input rules reach the client with their params", async () => {
    await expect400(await post({ input: [] }), "input", /must not be empty/);
    await expect400(await post({ input: [{ role: "user", content: "x" }, { type: "function_call_output", call_id: "call_x", output: "1" }] }), "call_id");
    await expect400(await post({ input: [{ role: "user", content: "x" }, { type: "reasoning", id: "bad", summary: [] }, { role: "assistant", content: "y" }] }), "input.1.id", "Invalid reasoning ID format");
  });

  test("replayed reasoning: a tampered or foreign seal is a 400 naming the item", async () => {
    const sealed = k.deps.sealer.seal("secret thoughts", "resp-check-v1");
    const tampered = sealed.slice(0, -3) + (sealed.endsWith("A") ? "BBB" : "AAA");
    const input = (enc: string) => [{ role: "user", content: "x" }, { type: "reasoning", encrypted_content: enc, summary: [] }, { role: "assistant", content: "y" }, { role: "user", content: "z" }];
    await expect400(await post({ input: input(tampered) }), "input.1.encrypted_content", /could not be verified/);
    await expect400(await post({ input: input(k.deps.sealer.seal("secret thoughts", "other-model-v1")) }), "input.1.encrypted_content");
    // An intact seal passes validation and reaches the worker check (no worker here: 503).
    expect((await post({ input: input(sealed) })).status).toBe(503);
  });

  test("a seal kiln made before version 2 is refused with the same 400", async () => {
    const old = madeByV1(loadServerSecret(k.deps.config.dataDir), "secret thoughts", "resp-check-v1").sealed;
    const input = [{ role: "user", content: "x" }, { type: "reasoning", encrypted_content: old, summary: [] }, { role: "assistant", content: "y" }];
    await expect400(await post({ input }), "input.1.encrypted_content", /could not be verified/);
  });

  test("with previous_response_id, errors name the item of the request as sent (input.1), not its place after the chain", async () => {
    const now = Math.floor(Date.now() / 1000);
    const output = [{ id: "msg_a", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "a", annotations: [] }] }];
    await insertResponse(
      k.deps.db,
      { id: "resp_chain_1", teamId: k.teamId, keyId: k.keyId, model: "resp-check-v1", status: "completed", requestJson: "{}", responseJson: JSON.stringify({ output }), createdAt: now, updatedAt: now, expiresAt: now + 3600 },
      ["one", "two", "three"].map((t, i) => ({ itemId: `msg_in_${i}`, item: { id: `msg_in_${i}`, type: "message", role: "user", content: [{ type: "input_text", text: t }] } })),
    );
    const chained = (input: unknown[]) => post({ previous_response_id: "resp_chain_1", input });
    const tampered = k.deps.sealer.seal("secret thoughts", "resp-check-v1").slice(0, -4);
    await expect400(await chained([{ role: "user", content: "x" }, { type: "function_call", call_id: "call_1", name: "f", arguments: "not json" }]), "input.1.arguments", /^input\.1\.arguments must be a JSON object/);
    await expect400(await chained([{ role: "user", content: "x" }, { type: "reasoning", encrypted_content: tampered, summary: [] }, { role: "assistant", content: "y" }]), "input.1.encrypted_content", /^input\.1\.encrypted_content could not be verified/);
  });

  test("tools: web_search forced without a backend, unknown tool types, duplicate names, tools on a model without them", async () => {
    await expect400(await post({ tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }), "tool_choice", /search backend/);
    await expect400(await post({ tools: [{ type: "code_interpreter" }] }), "tools.0.type");
    const f = { type: "function", name: "f", parameters: { type: "object" } };
    await expect400(await post({ tools: [f, f] }), "tools.1.name");
    await expect400(await post({ model: "plain-check-v1", tools: [f] }), "tools");
    await expect400(await post({ tools: [f], tool_choice: { type: "function", name: "g" } }), "tool_choice");
  });

  test("refused plainly: background without store, an unknown previous_response_id, truncation auto, unknown include", async () => {
    await expect400(await post({ background: true, store: false }), "background");
    const prev = await post({ previous_response_id: "resp_nope" });
    expect(prev.status).toBe(404);
    expect(((await prev.json()) as any).error.param).toBe("previous_response_id");
    await expect400(await post({ truncation: "auto" }), "truncation");
    await expect400(await post({ include: ["file_search_call.results"] }), "include");
    await expect400(await post({ model: "plain-check-v1", reasoning: { effort: "high" } }), "reasoning.effort");
  });

  test("json_schema text format needs a name and a schema", async () => {
    await expect400(await post({ text: { format: { type: "json_schema", schema: { type: "object" } } } }), "text.format.name");
    await expect400(await post({ text: { format: { type: "xml" } } }), "text.format.type");
  });
});
