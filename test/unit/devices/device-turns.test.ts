// The device turn table: one seat at a time, round robin among the waiting, a thread's overlapping runs share its turn,
// and a worker that ended gives back a turn it held. Seats are DeviceTurns on one table, in one thread or in workers.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DeviceTurns, DeviceTurnTable } from "../../../src/devices/device-turns.ts";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("DeviceTurns", () => {
  test("seats never overlap: three seats, twenty runs each, each run awaiting inside its turn", async () => {
    const table = new DeviceTurnTable(8);
    let inside = 0;
    let most = 0;
    const runs: Promise<void>[] = [];
    for (let s = 0; s < 3; s++) {
      const turns = new DeviceTurns(table.claim());
      runs.push((async () => {
        for (let i = 0; i < 20; i++) {
          await turns.run(async () => {
            most = Math.max(most, ++inside);
            await tick();
            await tick();
            inside--;
          });
        }
      })());
    }
    await Promise.all(runs);
    expect(most).toBe(1);
    expect(table.holder()).toBeNull();
  });

  test("a seat that asks again right away waits behind one already waiting (round robin)", async () => {
    const table = new DeviceTurnTable(4);
    const a = new DeviceTurns(table.claim());
    const b = new DeviceTurns(table.claim());
    const order: string[] = [];
    let bAsked!: () => void;
    const asked = new Promise<void>((resolve) => (bAsked = resolve));
    const aLoop = (async () => {
      for (let i = 0; i < 3; i++) {
        await a.run(async () => {
          order.push("a");
          if (i === 0) await asked;
          await tick();
        });
      }
    })();
    const bRun = (async () => {
      await tick();
      const done = b.run(async () => void order.push("b"));
      bAsked();
      await done;
    })();
    await Promise.all([aLoop, bRun]);
    expect(order).toEqual(["a", "b", "a", "a"]);
  });

  test("overlapping runs of one seat share its turn; it is given up when the last one ends", async () => {
    const table = new DeviceTurnTable(4);
    const seat = table.claim();
    const turns = new DeviceTurns(seat);
    let release!: () => void;
    const outer = turns.run(() => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    expect(await turns.run(async () => table.holder())).toBe(seat.seat);
    expect(table.holder()).toBe(seat.seat);
    release();
    await outer;
    expect(table.holder()).toBeNull();
  });

  test("a worker that ended holding the turn: the table passes it to the next waiting seat", async () => {
    const table = new DeviceTurnTable(4);
    const deadSeat = table.claim();
    const dead = new DeviceTurns(deadSeat);
    void dead.run(() => new Promise<void>(() => {}));
    await tick();
    expect(table.holder()).toBe(deadSeat.seat);
    const live = new DeviceTurns(table.claim());
    let ran = false;
    const waiting = live.run(async () => void (ran = true));
    await tick();
    expect(ran).toBe(false);
    table.release(deadSeat);
    await waiting;
    expect(ran).toBe(true);
    expect(table.holder()).toBeNull();
  });

  test("the table's own run (the main thread's probe) waits for a worker's turn, and frees its seat after", async () => {
    const table = new DeviceTurnTable(2);
    const worker = new DeviceTurns(table.claim());
    let release!: () => void;
    const held = worker.run(() => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    let probed = false;
    const probe = table.run(async () => void (probed = true));
    await tick();
    expect(probed).toBe(false);
    release();
    await Promise.all([held, probe]);
    expect(probed).toBe(true);
    // Its seat is free again (the worker holds the other of the two).
    expect(table.claim().seat).toBe(1);
    expect(() => table.claim()).toThrow("all 2 webgpu worker seats are taken");
  });

  test("worker threads on one table: no two inside at once, each gets its turns", async () => {
    const table = new DeviceTurnTable(4);
    const inside = new Int32Array(new SharedArrayBuffer(8));
    const workers = [0, 1].map(() => new Worker(join(import.meta.dir, "turn-worker.ts")));
    const results = await Promise.all(
      workers.map((w) => new Promise<{ runs: number; overlaps: number }>((resolve) => {
        w.onmessage = (ev) => resolve(ev.data);
        w.postMessage({ seat: table.claim(), inside: inside.buffer, runs: 30 });
      })),
    );
    for (const w of workers) w.terminate();
    expect(results).toEqual([{ runs: 30, overlaps: 0 }, { runs: 30, overlaps: 0 }]);
  });
});
