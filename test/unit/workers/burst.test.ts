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

/** A window with the plain periods given; announced ones that would show if used. */
const win = (quietMs: number, maxMs: number) => ({ quietMs, maxMs, announcedQuietMs: 1000, announcedMaxMs: 1000 });

describe("gatherBurst", () => {
  test("a lone request waits one quiet period only", async () => {
    const f = fakeClock([]);
    expect(await gatherBurst(f.queued, win(2, 10), f.clock)).toBe(2);
  });

  test("keeps waiting while requests arrive, stops once they go quiet", async () => {
    const f = fakeClock([1, 3, 5]);
    expect(await gatherBurst(f.queued, win(2, 10), f.clock)).toBe(8);
    expect(f.queued()).toBe(4);
  });

  test("never waits past maxMs, even under a steady stream", async () => {
    const f = fakeClock([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(await gatherBurst(f.queued, win(3, 10), f.clock)).toBe(10);
  });

  test("a zero window does not wait", async () => {
    const f = fakeClock([0]);
    expect(await gatherBurst(f.queued, win(2, 0), f.clock)).toBe(0);
  });

  test("requests the server announces keep it waiting through a longer quiet, until the last one says none is left", async () => {
    // Arrivals 12 ms apart, as a main thread preparing them one by one sends them: past the plain 5 ms quiet.
    const arrivals = [12, 24, 36];
    const f = fakeClock(arrivals);
    const incoming = () => 3 - arrivals.filter((a) => a <= f.clock.now()).length;
    const window = { quietMs: 5, maxMs: 20, announcedQuietMs: 30, announcedMaxMs: 150 };
    // The last arrival (36, seen at 40) announces none more, and the plain bound is long past: it ends there.
    expect(await gatherBurst(f.queued, window, f.clock, incoming)).toBe(40);
    expect(f.queued()).toBe(4);
    // Without the announcement, the first 5 ms of quiet end it with the first request alone.
    const g = fakeClock(arrivals);
    expect(await gatherBurst(g.queued, window, g.clock)).toBe(5);
  });

  test("announced requests that never come hold it for the announced quiet, and never past the announced bound", async () => {
    const window = { quietMs: 5, maxMs: 20, announcedQuietMs: 30, announcedMaxMs: 150 };
    const f = fakeClock([]);
    expect(await gatherBurst(f.queued, window, f.clock, () => 2)).toBe(30);
    const steady = fakeClock(Array.from({ length: 60 }, (_, i) => 4 * (i + 1)));
    expect(await gatherBurst(steady.queued, window, steady.clock, () => 1)).toBe(150);
  });
});
