// The Redis connection's pure parts (TIME replies, URLs in logs) and its on-demand connecting against a real server.
import { expect, test } from "bun:test";
import { LuaScript, RedisConnection, redactUrl, timeMs } from "../../../src/redis/connection.ts";
import { startRedis } from "../../helpers/redis-server.ts";

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
