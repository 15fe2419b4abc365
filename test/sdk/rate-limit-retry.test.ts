// The official clients, with their default retries, against a team at its limits: they read retry-after-ms, wait that
// long and succeed on their own; a refusal they must not retry (403, 402) surfaces as the right error class.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { restrictKey } from "../../src/db/keys-repo.ts";
import { setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

describe("official clients and refusals", () => {
  test("with default retries, a request refused for the team's RPM succeeds after waiting out the 429", async () => {
    const team = await createTeam(server.deps.db, "busy");
    // 60 per minute: one request refills every second, so the wait stays short.
    await updateTeam(server.deps.db, team.id, { rpmLimit: 60 });
    const key = (await createKey(server.deps.db, team.id, "sdk")).key;
    const spent = await Promise.all(Array.from({ length: 60 }, () => fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })));
    expect(spent.every((r) => r.status === 200)).toBe(true);
    const direct = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(direct.status).toBe(429);
    const waitMs = Number(direct.headers.get("retry-after-ms"));
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(1000);

    // A client with the default settings (maxRetries 2); the first attempt arrives while the bucket is still empty.
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1` });
    const before = server.logs.filter((l) => l.msg === "request" && l.status === 429).length;
    const started = performance.now();
    const res = await client.chat.completions.create({ model: server.modelId, messages: [{ role: "user", content: "Hi" }], max_tokens: 4 });
    const took = performance.now() - started;
    expect(res.object).toBe("chat.completion");
    // The server refused at least one attempt, and the client waited instead of failing.
    expect(server.logs.filter((l) => l.msg === "request" && l.status === 429).length).toBeGreaterThan(before);
    expect(took).toBeGreaterThan(100);
    expect(took).toBeLessThan(5000);
  }, 60_000);

  test("the Anthropic client waits out a 429 too; a restricted key gets PermissionDeniedError, an unfunded team a 402", async () => {
    const team = await createTeam(server.deps.db, "anthropic-busy");
    await updateTeam(server.deps.db, team.id, { rpmLimit: 60 });
    const created = await createKey(server.deps.db, team.id, "sdk");
    await Promise.all(Array.from({ length: 60 }, () => fetch(`${server.url}/v1/models`, { headers: { "x-api-key": created.key } })));
    const client = new Anthropic({ apiKey: created.key, baseURL: server.url });
    const before = server.logs.filter((l) => l.msg === "request" && l.status === 429).length;
    const msg = await client.messages.create({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "Hi" }] });
    expect(msg.type).toBe("message");
    expect(server.logs.filter((l) => l.msg === "request" && l.status === 429).length).toBeGreaterThan(before);

    await restrictKey(server.deps.db, created.id, { models: ["some-other-model-v1"] });
    const denied = await client.messages.create({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "Hi" }] }).catch((e) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(denied.status).toBe(403);
    expect(denied.error).toMatchObject({ type: "error", error: { type: "permission_error", message: `This API key may not use the model '${server.modelId}'.` } });

    await restrictKey(server.deps.db, created.id, { models: null });
    await setBillingEnabled(server.deps.db, team.id, true);
    const unpaid = await client.messages.create({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "Hi" }] }).catch((e) => e);
    expect(unpaid).toBeInstanceOf(Anthropic.APIError);
    expect(unpaid.status).toBe(402);
    expect(unpaid.error.error.type).toBe("billing_error");
  }, 60_000);
});
