// The subscriber connection against a real redis-server: handlers hear `ready` once their channel is subscribed, then its
// messages; a channel is subscribed once however its handlers come and go; a Redis restart is followed by `ready` again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RedisSubscriber } from "../../../src/redis/subscriber.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { startRedis, type TestRedis } from "../../helpers/redis-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

/** A handler that writes down what it hears: "ready" and each message. */
function ear() {
  const heard: string[] = [];
  return { heard, message: (t: string) => heard.push(t), ready: () => heard.push("ready") };
}

async function publish(channel: string, text: string): Promise<number> {
  return Number(await (await redis.client()).send("PUBLISH", [channel, text]));
}

test("ready once subscribed (at once for a second handler), then every message to each handler; leaving stops them", async () => {
  const sub = new RedisSubscriber(redis.url);
  try {
    const a = ear();
    const leaveA = sub.join("s1:a", a);
    await waitFor(() => a.heard.includes("ready"), { what: "the first handler's ready" });
    const b = ear();
    const leaveB = sub.join("s1:a", b);
    await waitFor(() => b.heard.includes("ready"), { what: "the second handler's ready" });
    // One subscription on the server, however many handlers: each message once to each.
    expect(await publish("s1:a", "one")).toBe(1);
    await waitFor(() => a.heard.length === 2 && b.heard.length === 2, { what: "both handlers to hear the message" });
    expect([a.heard, b.heard]).toEqual([["ready", "one"], ["ready", "one"]]);
    leaveA();
    expect(await publish("s1:a", "two")).toBe(1);
    await waitFor(() => b.heard.length === 3, { what: "the remaining handler to hear the second message" });
    expect(a.heard).toEqual(["ready", "one"]);
    leaveB();
    await waitFor(() => publish("s1:a", "three"), { what: "the channel to be unsubscribed", until: (n) => n === 0 });
  } finally {
    sub.close();
  }
});

test("joining and leaving while the subscribe is on its way: subscribed once, each message heard once", async () => {
  const sub = new RedisSubscriber(redis.url);
  try {
    const first = ear();
    sub.join("s2:a", first)();
    const second = ear();
    sub.join("s2:a", second);
    await waitFor(() => second.heard.includes("ready"), { what: "the later handler's ready" });
    expect(await publish("s2:a", "m")).toBe(1);
    expect(await publish("s2:a", "n")).toBe(1);
    // Messages arrive in order, so a doubled "m" would show before "n".
    await waitFor(() => second.heard.at(-1), { what: "the last message", until: (t) => t === "n" });
    expect(second.heard).toEqual(["ready", "m", "n"]);
    expect(first.heard).toEqual([]);
  } finally {
    sub.close();
  }
});

test("a Redis restart: the warning is logged once, channels are subscribed again and handlers hear ready again", async () => {
  const logger = memoryLogger();
  const sub = new RedisSubscriber(redis.url, { logger, retryMs: [20, 100] });
  try {
    const a = ear();
    sub.join("s3:a", a);
    await waitFor(() => a.heard.includes("ready"), { what: "ready" });
    await redis.kill();
    await waitFor(() => logger.lines.some((l) => l.msg?.toString().startsWith("redis subscriber disconnected")), { what: "the disconnect warning" });
    await redis.restart();
    await waitFor(() => a.heard.filter((h) => h === "ready").length, { what: "ready after the restart", until: (n) => n === 2 });
    expect(await publish("s3:a", "back")).toBe(1);
    await waitFor(() => a.heard.at(-1), { what: "a message after the restart", until: (t) => t === "back" });
    expect(logger.lines.filter((l) => l.msg?.toString().startsWith("redis subscriber disconnected"))).toHaveLength(1);
    expect(logger.lines.filter((l) => l.msg === "redis subscriber connected again")).toHaveLength(1);
  } finally {
    sub.close();
  }
}, 60_000);
