// The Redis connection's pure parts (TIME replies, URLs in logs), its on-demand connecting against a real server, and
// commands fired without waiting for them.
import { expect, test } from "bun:test";
import { LuaScript, RedisConnection, redactUrl, timeMs } from "../../../src/redis/connection.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { startRedis } from "../../helpers/redis-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

test("timeMs: TIME's seconds and microseconds as whole milliseconds", () => {
  expect(timeMs(["1767225600", "999999"])).toBe(1_767_225_600_999);
  expect(timeMs(["1767225600", "0"])).toBe(1_767_225_600_000);
});

test("redactUrl keeps host and port, hides the password", () => {
  expect(redactUrl("redis://:s3cret@cache.internal:6380/2")).toBe("redis://:***@cache.internal:6380/2");
  expect(redactUrl("rediss://kiln:s3cret@cache:6379")).toBe("rediss://kiln:***@cache:6379");
  expect(redactUrl("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
});

test("connects on first use (RESP3 with redis-server 7), runs scripts by SHA, and does nothing after close", async () => {
  const redis = await startRedis();
  const conn = new RedisConnection(redis.url);
  try {
    const hello = (await conn.send("HELLO", [3])) as { version: string; proto: number };
    expect(hello.proto).toBe(3);
    expect(hello.version).toMatch(/^\d+\.\d+\.\d+$/);
    const script = new LuaScript("double", "return tonumber(ARGV[1]) * 2");
    expect(await conn.run(script, [], [21])).toBe(42);
    expect(await (await redis.client()).send("SCRIPT", ["EXISTS", script.sha])).toEqual([1]);
    expect(await conn.time()).toBeGreaterThan(1_700_000_000_000);
    conn.close();
    await expect(conn.send("PING", [])).rejects.toMatchObject({ status: 503 });
  } finally {
    conn.close();
    await redis.stop();
  }
});

test("fire: sends without waiting (connecting first when needed), is dropped while Redis is away, and works again once it is back", async () => {
  const redis = await startRedis();
  const conn = new RedisConnection(redis.url, { connectTimeoutMs: 500, logger: memoryLogger() });
  const reader = await redis.client();
  try {
    conn.fire("SET", ["fired", "1"]);
    await waitFor(() => reader.send("GET", ["fired"]), { what: "the first fired command", until: (v) => v === "1" });
    await redis.kill();
    // Nothing throws, nothing waits: the command is lost, as a pub/sub message may be.
    conn.fire("SET", ["fired", "2"]);
    await redis.restart();
    const again = await redis.client();
    await waitFor(() => (conn.fire("SET", ["fired", "3"]), again.send("GET", ["fired"])), { what: "a fired command after the restart", until: (v) => v === "3" });
  } finally {
    conn.close();
    await redis.stop();
  }
}, 60_000);
