// Limits and holds in Redis through HTTP: replicas sharing one Redis admit a team's RPM exactly once between them; on a
// real kiln (the tiny model), the bulk lane's buckets live in Redis beside the interactive ones, a Redis killed
// mid-test fails limited and billed requests closed with 503 backend_unavailable while unlimited teams carry on, and
// the server recovers once Redis is back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { testKiln } from "../helpers/kiln.ts";
import { startRedis, type TestRedis } from "../helpers/redis-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chatInTier } from "../helpers/tier-call.ts";
import { waitFor } from "../helpers/wait-for.ts";

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

describe("replicas sharing one Redis", () => {
  test("three apps (each its own database, the same team id), 64 concurrent requests against 10 RPM: exactly 10 pass", async () => {
    const replicas = await Promise.all([0, 1, 2].map(() => testKiln({ env: { KILN_REDIS_URL: redis.url } })));
    for (const r of replicas) await updateTeam(r.deps.db, r.teamId, { rpmLimit: 10 });
    expect(new Set(replicas.map((r) => r.teamId)).size).toBe(1);
    const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => replicas[i % 3]!.req("/v1/models")));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(54);
    // Each replica reports the shared bucket.
    const headers = answers.filter((r) => r.status === 429).map((r) => r.headers.get("x-ratelimit-remaining-requests"));
    expect(new Set(headers)).toEqual(new Set(["0"]));
  });
});

describe("a real server whose Redis goes away", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ KILN_REDIS_URL: redis.url });
  });
  afterAll(() => server.stop(1000));

  const team = async (name: string) => {
    const t = await createTeam(server.deps.db, name);
    return { id: t.id, key: (await createKey(server.deps.db, t.id, "k")).key };
  };
  const chat = (key: string) =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 }),
    });

  test("the bulk lane's buckets are in Redis too: batch lines use up their own RPM, and interactive requests still pass", async () => {
    const t = await team("lanes");
    await updateTeam(server.deps.db, t.id, { rpmLimit: 1 });
    await chatInTier(server.deps, t.key, "batch", { model: server.modelId, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 });
    const second = await chatInTier(server.deps, t.key, "batch", { model: server.modelId, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 }).catch((e) => e);
    expect(second).toMatchObject({ status: 429, message: expect.stringContaining("flex and batch requests per minute (RPM)") });
    const interactive = await chat(t.key);
    expect(interactive.status).toBe(200);
    expect(interactive.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect((await chat(t.key)).status).toBe(429);
    const raw = await redis.client();
    expect(await raw.send("EXISTS", [`kiln:rl:team:${t.id}:bulk:rpm`])).toBe(1);
    expect(await raw.send("EXISTS", [`kiln:rl:team:${t.id}:rpm`])).toBe(1);
  });

  test("limited and billed requests get 503 backend_unavailable while it is down; unlimited ones are served; all recover", async () => {
    const limited = await team("limited");
    await updateTeam(server.deps.db, limited.id, { rpmLimit: 1000, tpmLimit: 100_000 });
    const billed = await team("billed");
    await setBillingEnabled(server.deps.db, billed.id, true);
    await credit(server.deps.db, billed.id, 1_000_000, null);
    const free = await team("free");
    for (const t of [limited, billed, free]) expect((await chat(t.key)).status).toBe(200);

    await redis.kill();
    for (const t of [limited, billed]) {
      const res = await chat(t.key);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({
        error: {
          message: "Rate limits and billing are kept in Redis, which this server cannot reach right now; retry shortly.",
          type: "server_error", param: null, code: "backend_unavailable",
        },
      });
    }
    // The edge's RPM check fails closed too, on every keyed endpoint.
    const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${limited.key}` } });
    expect(models.status).toBe(503);
    // A team without limits or billing never needs Redis.
    expect((await chat(free.key)).status).toBe(200);
    expect(server.logs.filter((l) => l.msg === "redis unreachable: limited and billed requests get 503 until it answers")).toHaveLength(1);

    await redis.restart();
    for (const t of [limited, billed]) {
      await waitFor(async () => (await chat(t.key)).status, { what: `team ${t.id} served again after Redis came back`, until: (s) => s === 200 });
    }
    expect(server.logs.some((l) => l.msg === "redis reachable again")).toBe(true);
  });
});
