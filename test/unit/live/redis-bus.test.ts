// Two replicas' live buses (each its own Redis connections) over one real redis-server and one SQLite database: a
// follower on one replica hears a job running on the other exactly once and in order, whenever it joins; lost
// messages, a Redis restart and a dead producer are healed from the store; cancels reach the job's replica, or end a
// job nobody runs; an unreachable Redis fails a cancel closed.
import { describe, expect, test } from "bun:test";
import { cancelElsewhere, ORPHAN_MS } from "../../../src/live/cancel-shared.ts";
import { followResponse } from "../../../src/live/follow.ts";
import { LiveResponses } from "../../../src/live/live.ts";
import { RedisLiveBus } from "../../../src/live/redis-bus.ts";
import { endStored } from "../../../src/api/responses/stored.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { appendEvent, updateResponse } from "../../../src/db/response-events-repo.ts";
import { deleteResponse, findResponse, insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import type { AbortReason } from "../../../src/inference/admitted-run.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { redisPerFile } from "../../helpers/redis-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const shared = redisPerFile();

let run = 0;
// Followers read the store on a timer only every minute unless a test says otherwise, and tests that rely on live
// messages time out well before that: a path that only worked through the timer would fail rather than pass slowly.
const ID = "resp_shared";

/** Two replicas sharing one database and one Redis (each test its own prefix); P produces, F follows and cancels. */
async function setup() {
  const prefix = `bus${++run}:`;
  const replica = () => {
    const conn = new RedisConnection(shared.redis.url, { connectTimeoutMs: 500 });
    const bus = new RedisLiveBus(conn, { prefix, retryMs: [20, 100] });
    shared.track(bus, conn);
    return new LiveResponses(memoryLogger(), bus);
  };
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const response = (status: string) => JSON.stringify({ id: ID, object: "response", status, output: [] });
  await insertResponse(
    db,
    { id: ID, teamId: team.id, keyId: key.id, model: "m", status: "in_progress", background: true, requestJson: "{}", responseJson: response("in_progress"), createdAt: 1, updatedAt: 1, expiresAt: 9e9 },
    [],
  );
  const P = replica();
  const F = replica();
  let seq = 0;
  /** The producer's recorder: stores the event, then publishes it (unless the message is to be lost). */
  const emit = async (type: string, o: { publish?: boolean } = {}) => {
    const sequence = seq++;
    const json = JSON.stringify({ type, sequence_number: sequence });
    await appendEvent(db, ID, sequence, json);
    if (type === "response.completed") await updateResponse(db, ID, { status: "completed", responseJson: response("completed") });
    if (o.publish !== false) P.publish(ID, { sequence, type, json });
    return sequence;
  };
  /** F follows from `after`: the sequence numbers it sends, as they come, and how the stream ended. */
  const follow = (after: number, o: { healMs?: number; draining?: () => boolean; signal?: AbortSignal } = {}) => {
    const gen = followResponse(db, F, ID, after, { teamId: team.id, draining: o.draining ?? (() => false), healMs: o.healMs ?? 60_000, signal: o.signal });
    const seen: number[] = [];
    const done = (async () => {
      for (let r = await gen.next(); ; r = await gen.next()) {
        if (r.done) return r.value;
        seen.push(JSON.parse(r.value.data).sequence_number ?? -1);
      }
    })();
    return { seen, done };
  };
  /** Waits until `n` replicas subscribe to the response's events on the server (1: the follower's subscription is in place). */
  const subscribed = async (n = 1) => {
    const client = await shared.redis.client();
    await waitFor(async () => ((await client.send("PUBSUB", ["NUMSUB", `${prefix}live:${ID}`])) as [string, number])[1], { what: `${n} subscriptions to the events`, until: (k) => k === n });
  };
  return { db, teamId: team.id, P, F, emit, follow, subscribed, row: async () => (await findResponse(db, ID, team.id))! };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** Lets the producer's publishes go out between events, as generation steps do. */
const step = () => new Promise<void>((r) => setImmediate(r));

describe("following a job on another replica", () => {
  test("a follower that joins mid-stream gets every event after its number exactly once, in order, live (no timer reads)", async () => {
    const { P, emit, follow } = await setup();
    P.begin(ID, () => {});
    for (let i = 0; i < 40; i++) await emit(i === 0 ? "response.created" : "response.output_text.delta");
    const f = follow(10);
    for (let i = 0; i < 400; i++) {
      await emit("response.output_text.delta");
      await step();
    }
    // Heard before the job ends (its end would make the follower read the store).
    await waitFor(() => f.seen.length, { what: "every event so far, live", until: (n) => n === 429 });
    await emit("response.completed");
    P.end(ID);
    expect(await f.done).toEqual({ outcome: "completed" });
    expect(f.seen).toEqual(range(11, 440));
  }, 20_000);

  test("a lost event is noticed by the next one's number and read from the store; a lost last event by the quiet-time read", async () => {
    const { P, emit, follow, subscribed } = await setup();
    P.begin(ID, () => {});
    await emit("response.created");
    const f = follow(-1);
    await subscribed();
    await emit("response.in_progress");
    await waitFor(() => f.seen.length, { what: "the follower to hear the first live event", until: (n) => n === 2 });
    await emit("response.output_text.delta", { publish: false });
    await emit("response.output_text.delta", { publish: false });
    await emit("response.output_text.delta");
    await waitFor(() => f.seen.length, { what: "the gap to be filled from the store", until: (n) => n === 5 });
    expect(f.seen).toEqual([0, 1, 2, 3, 4]);

    const g = follow(4, { healMs: 50 });
    await emit("response.completed", { publish: false });
    P.end(ID);
    expect(await g.done).toEqual({ outcome: "completed" });
    expect(g.seen).toEqual([5]);
    expect(await f.done).toEqual({ outcome: "completed" });
    expect(f.seen).toEqual([0, 1, 2, 3, 4, 5]);
  }, 20_000);

  test("Redis restarting mid-stream: events published while it was down come from the store once the subscription is back", async () => {
    const { P, emit, follow, subscribed } = await setup();
    P.begin(ID, () => {});
    await emit("response.created");
    const f = follow(-1);
    await subscribed();
    await emit("response.in_progress");
    await waitFor(() => f.seen.length, { what: "a live event", until: (n) => n === 2 });
    await shared.redis.kill();
    try {
      for (let i = 0; i < 5; i++) await emit("response.output_text.delta");
      expect(f.seen).toEqual([0, 1]);
    } finally {
      await shared.redis.restart();
    }
    // The re-subscription's ready reads the store: no timer is needed (it is a minute here).
    await waitFor(() => f.seen.length, { what: "the events stored while Redis was down", until: (n) => n === 7 });
    await emit("response.output_text.delta");
    await waitFor(() => f.seen.length, { what: "a live event again", until: (n) => n === 8 });
    await emit("response.completed");
    expect(await f.done).toEqual({ outcome: "completed" });
    expect(f.seen).toEqual(range(0, 8));
  }, 20_000);

  test("a job nobody produces any more (its replica died) is followed until a recovery stores its end", async () => {
    const { db, emit, follow, row } = await setup();
    await emit("response.created");
    await emit("response.in_progress");
    const f = follow(-1, { healMs: 50 });
    await waitFor(() => f.seen.length, { what: "the stored events", until: (n) => n === 2 });
    // Still waiting: several quiet-time reads have found nothing new.
    await Bun.sleep(200);
    expect(f.seen).toEqual([0, 1]);
    await endStored({ db }, await row(), { status: "failed", message: "kiln restarted while this background response was running; create it again." });
    expect(await f.done).toEqual({ outcome: "error", code: "server_error" });
    expect(f.seen).toEqual([0, 1, 2]);
  });

  test("the job's end, or its row deleted, ends a follower that heard no terminal event; a draining server ends it with server_shutting_down", async () => {
    const { db, teamId, P, emit, follow, subscribed } = await setup();
    P.begin(ID, () => {});
    await emit("response.created");
    let draining = false;
    const d = follow(-1, { healMs: 50, draining: () => draining });
    const f = follow(-1);
    await waitFor(() => f.seen.length + d.seen.length, { what: "the stored event", until: (n) => n === 2 });
    await subscribed();
    draining = true;
    expect(await d.done).toEqual({ outcome: "error", code: "server_shutting_down" });
    expect(d.seen).toEqual([0, -1]);
    await deleteResponse(db, ID, teamId);
    P.end(ID);
    expect(await f.done).toEqual({ outcome: "completed" });
    expect(f.seen).toEqual([0]);
  }, 20_000);
});

test("a follower whose client leaves stops waiting at once and gives its subscription back", async () => {
  const { P, emit, follow, subscribed } = await setup();
  P.begin(ID, () => {});
  await emit("response.created");
  const left = new AbortController();
  const f = follow(-1, { signal: left.signal });
  await subscribed();
  left.abort();
  expect(await f.done).toEqual({ outcome: "client_gone" });
  await subscribed(0);
  P.end(ID);
}, 20_000);

describe("cancelling a job on another replica", () => {
  test("the job's replica aborts it as a local cancel would; the answer waits for its stored end", async () => {
    const { db, P, F, emit, row } = await setup();
    const aborted: AbortReason[] = [];
    P.begin(ID, (reason) => {
      aborted.push(reason);
      // The run stops within a step; its recorder stores and publishes the end, then the job ends.
      void (async () => {
        await step();
        await endStored({ db }, await row(), { status: "cancelled" });
        P.publish(ID, { sequence: 1, type: "response.incomplete", json: "{}" });
        P.end(ID);
      })();
    });
    await emit("response.created");
    const t0 = performance.now();
    const ended = await cancelElsewhere(F.bus!, await row(), 5000, row, (r) => endStored({ db }, r, { status: "cancelled" }));
    expect(ended.status).toBe("cancelled");
    expect(aborted).toEqual(["cancelled"]);
    expect(P.isLive(ID)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(ORPHAN_MS);
  });

  test("a job no replica runs is ended cancelled once its cancel has gone unheard for ORPHAN_MS", async () => {
    const { db, F, emit, row } = await setup();
    await emit("response.created");
    const t0 = performance.now();
    const ended = await cancelElsewhere(F.bus!, await row(), 5000, row, (r) => endStored({ db }, r, { status: "cancelled" }));
    expect(ended.status).toBe("cancelled");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(ORPHAN_MS);
    expect(performance.now() - t0).toBeLessThan(ORPHAN_MS + 2000);
  });

  test("a job that heard the cancel and has not stopped comes back as it stands after the wait", async () => {
    const { db, P, F, emit, row } = await setup();
    P.begin(ID, () => {});
    await emit("response.created");
    await waitFor(() => F.bus!.cancel(ID), { what: "the job's replica to take cancels", until: (n) => n === 1 });
    expect((await cancelElsewhere(F.bus!, await row(), 300, row, (r) => endStored({ db }, r, { status: "cancelled" }))).status).toBe("in_progress");
    P.end(ID);
  });

  test("with Redis unreachable the cancel fails closed with 503 backend_unavailable, and nothing is ended", async () => {
    const { db, F, emit, row } = await setup();
    await emit("response.created");
    await shared.redis.kill();
    try {
      const failed = await cancelElsewhere(F.bus!, await row(), 5000, row, (r) => endStored({ db }, r, { status: "cancelled" })).then(() => null, (e: unknown) => e);
      expect(failed).toMatchObject({ status: 503, code: "backend_unavailable" });
      expect((await row()).status).toBe("in_progress");
    } finally {
      await shared.redis.restart();
    }
  }, 30_000);
});
