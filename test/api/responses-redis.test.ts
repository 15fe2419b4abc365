// Stored and background responses on a real kiln started with KILN_REDIS_URL (the tiny model): its live responses go
// through the Redis bus, a background stream is read in part, resumed with starting_after and cancelled as without it;
// and a second front over the same database and Redis (as another replica would be, without its own jobs) follows,
// cancels and deletes a job running on that kiln.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LiveResponses } from "../../src/live/live.ts";
import { RedisLiveBus } from "../../src/live/redis-bus.ts";
import { createApp, type Kiln } from "../../src/app.ts";
import { eventsAfter } from "../../src/db/response-events-repo.ts";
import { responseExists } from "../../src/db/responses-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { RedisConnection } from "../../src/redis/connection.ts";
import { startRedis, type TestRedis } from "../helpers/redis-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { StreamText } from "../helpers/stream-text.ts";
import { waitFor } from "../helpers/wait-for.ts";

type Json = Record<string, any>;

let redis: TestRedis;
let server: TestServer;
let other: Kiln;
let otherBus: RedisLiveBus;
let otherConn: RedisConnection;
beforeAll(async () => {
  redis = await startRedis();
  server = await startTestServer({ KILN_REDIS_URL: redis.url });
  otherConn = new RedisConnection(redis.url);
  otherBus = new RedisLiveBus(otherConn);
  other = createApp({ ...server.deps, live: new LiveResponses(memoryLogger(), otherBus) });
});
afterAll(async () => {
  otherBus.close();
  otherConn.close();
  await server.stop(1000);
  await redis.stop();
});

/** A long greedy run: the tiny model never ends this prompt, so only max_output_tokens or a cancel stops it. */
const LONG = { input: "Hello", temperature: 0, max_output_tokens: 3000 };

/** A request to the kiln (`via: "kiln"`) or to the other front. */
function req(via: "kiln" | "other", path: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${server.key}` };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  const body = init.json === undefined ? undefined : JSON.stringify(init.json);
  const method = init.method ?? (body ? "POST" : "GET");
  if (via === "kiln") return fetch(`${server.url}${path}`, { method, headers, body });
  return other.handle(new Request(`http://kiln.test${path}`, { method, headers, body }));
}

/** The events of an SSE text, in order (frames without JSON data, such as keep-alive comments, are left out). */
function events(text: string): Json[] {
  return text.split("\n\n").flatMap((frame) => {
    const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return data ? [JSON.parse(data) as Json] : [];
  });
}

async function background(body: Json): Promise<string> {
  const res = await req("kiln", "/v1/responses", { json: { model: server.modelId, background: true, ...body } });
  expect(res.status).toBe(200);
  return ((await res.json()) as Json).id;
}

/** Waits until the job has stored some of its text, so it is running and has output to cancel. */
async function writing(id: string): Promise<void> {
  await waitFor(async () => (await eventsAfter(server.deps.db, id, -1)).some((e) => e.json.includes('"response.output_text.delta"')), { what: `a text delta stored for ${id}` });
}

describe("one kiln with KILN_REDIS_URL", () => {
  test("its live responses use the Redis bus; a background stream is read in part, resumed after N, and replayed whole", async () => {
    expect(server.deps.live.bus).toBeInstanceOf(RedisLiveBus);
    const res = await req("kiln", "/v1/responses", { json: { model: server.modelId, input: "Say hello", max_output_tokens: 48, temperature: 0, background: true, stream: true } });
    const first = new StreamText(res);
    await first.until('"sequence_number":5}');
    const seen = events(first.text).slice(0, 6);
    // The client leaves; the background job goes on.
    await first.leave();
    const id = seen[0]!.response.id;
    const rest = events(await (await req("kiln", `/v1/responses/${id}?stream=true&starting_after=5`)).text());
    expect(rest.map((e) => e.sequence_number)).toEqual(rest.map((_, i) => 6 + i));
    expect(["response.completed", "response.incomplete"]).toContain(rest.at(-1)!.type);
    const all = events(await (await req("kiln", `/v1/responses/${id}?stream=true`)).text());
    expect(all).toEqual([...seen, ...rest]);
  });

  test("a cancel ends the running job cancelled and answers with it", async () => {
    const id = await background(LONG);
    await writing(id);
    const res = await req("kiln", `/v1/responses/${id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).status).toBe("cancelled");
    expect(server.deps.scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });
});

describe("a job on this kiln, through another front over the same database and Redis", () => {
  test("followed from N: exactly the stored events after N, in order, live until the job ends; cancelled there: the answer is the cancelled response", async () => {
    const id = await background(LONG);
    await writing(id);
    const res = await req("other", `/v1/responses/${id}?stream=true&starting_after=2`);
    expect(res.status).toBe(200);
    const follower = new StreamText(res);
    // Live events reach the other front while the job runs.
    const stored = (await eventsAfter(server.deps.db, id, -1)).length;
    await follower.until(`"sequence_number":${stored + 5}}`);
    const cancel = await req("other", `/v1/responses/${id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    const cancelled = (await cancel.json()) as Json;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.usage.output_tokens).toBeGreaterThan(0);
    expect(server.deps.scheduler.load()).toEqual({ waiting: 0, active: 0 });
    const followed = events(await follower.rest());
    expect(followed.map((e) => e.sequence_number)).toEqual((await eventsAfter(server.deps.db, id, 2)).map((e) => e.sequence));
    expect(followed.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "cancelled" } });
  });

  test("deleted there: the job stops on this kiln and its row is gone", async () => {
    const id = await background(LONG);
    await writing(id);
    const res = await req("other", `/v1/responses/${id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, object: "response", deleted: true });
    await waitFor(() => server.deps.scheduler.load().active, { what: "the deleted job's run to stop", until: (n) => n === 0, timeoutMs: 10_000 });
    expect(await responseExists(server.deps.db, id)).toBe(false);
    expect(server.deps.live.isLive(id)).toBe(false);
  });
});
