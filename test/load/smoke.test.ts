// The load scenario in miniature (tiny model, a few seconds) for the normal suite: correctness only, no speed targets.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { summarize } from "./metrics.ts";
import { streamChat } from "./stream-client.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop(1000));

describe("load smoke", () => {
  test("16 concurrent streaming clients all complete with counted tokens, and nothing is left behind", async () => {
    const t0 = performance.now();
    const timings = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        streamChat(s.url, s.key, { model: s.modelId, messages: [{ role: "user", content: `client ${i}` }], max_tokens: 24, temperature: 0.7, seed: i, ignore_eos: true }),
      ),
    );
    const summary = summarize(16, timings, performance.now() - t0);
    expect(summary.requests).toBe(16);
    for (const t of timings) {
      expect(t.outputTokens).toBe(24);
      expect(t.chunkTimesMs.length).toBeGreaterThan(0);
    }
    expect(summary.outputTokPerSec).toBeGreaterThan(0);
    expect(s.runtime.scheduler.load()).toEqual({ waiting: 0, active: 0 });
    expect(s.runtime.pool.stats().every((w) => w.held === 0 && w.state === "ready")).toBe(true);
  });
});
