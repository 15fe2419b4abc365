// The redis-server test helper: a real server on loopback that answers, dies when killed, comes back on its port, and is gone after stop.
import { expect, test } from "bun:test";
import { startRedis } from "../../helpers/redis-server.ts";

test("starts on 127.0.0.1 with nothing persisted; kill, restart on the same port, stop", async () => {
  const redis = await startRedis();
  try {
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    const c = await redis.client();
    expect(await c.send("PING", [])).toBe("PONG");
    expect(await c.send("CONFIG", ["GET", "save"])).toEqual({ save: "" });
    expect(await c.send("CONFIG", ["GET", "appendonly"])).toEqual({ appendonly: "no" });
    expect(await c.send("CONFIG", ["GET", "bind"])).toEqual({ bind: "127.0.0.1" });
    await c.send("SET", ["k", "v"]);
    await redis.kill();
    await expect(c.send("PING", [])).rejects.toThrow();
    await redis.restart();
    const again = await redis.client();
    expect(await again.send("GET", ["k"])).toBeNull();
  } finally {
    await redis.stop();
  }
  const after = await redis.client().then(() => "connected", () => "refused");
  expect(after).toBe("refused");
});
