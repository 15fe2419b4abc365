// The official openai client, with its default retries, against a team at its RPM: it reads retry-after-ms, waits
// that long and succeeds on its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

describe("openai SDK and 429", () => {
  test("with default retries, a request refused for the team's RPM succeeds after waiting out the 429", async () => {
    const team = createTeam(server.deps.db, "busy");
    // 60 per minute: one request refills every second, so the wait stays short.
    updateTeam(server.deps.db, team.id, { rpmLimit: 60 });
    const key = createKey(server.deps.db, team.id, "sdk").key;
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
});
