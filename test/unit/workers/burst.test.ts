import { describe, expect, test } from "bun:test";
import { gatherBurst } from "../../../workers/text/burst.ts";

/** A fake clock whose sleep advances time and lets `arrivals` add requests at given times. */
function fakeClock(arrivals: number[]) {
  let t = 0;
  const queue = { length: 1 };
  return {
    queued: () => queue.length,
    clock: {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms;
        queue.length = 1 + arrivals.filter((a) => a <= t).length;
      },
    },
  };
}

describe("gatherBurst", () => {
  test("a lone request waits one quiet period only", async () => {
    const f = fakeClock([]);
    expect(await gatherBurst(f.queued, { quietMs: 2, maxMs: 10 }, f.clock)).toBe(2);
  });

  test("keeps waiting while requests arrive, stops once they go quiet", async () => {
    const f = fakeClock([1, 3, 5]);
    expect(await gatherBurst(f.queued, { quietMs: 2, maxMs: 10 }, f.clock)).toBe(8);
    expect(f.queued()).toBe(4);
  });

  test("never waits past maxMs, even under a steady stream", async () => {
    const f = fakeClock([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(await gatherBurst(f.queued, { quietMs: 3, maxMs: 10 }, f.clock)).toBe(10);
  });

  test("a zero window does not wait", async () => {
    const f = fakeClock([0]);
    expect(await gatherBurst(f.queued, { quietMs: 2, maxMs: 0 }, f.clock)).toBe(0);
  });
});
