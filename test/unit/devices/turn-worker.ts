// A worker for device-turns.test.ts: takes its seat's turn `runs` times, counting whether another thread was inside.
import { type DeviceSeat, DeviceTurns } from "../../../src/devices/device-turns.ts";

// In a Bun worker the global object is the worker scope.
const scope = globalThis as unknown as { onmessage: (ev: MessageEvent) => void; postMessage(msg: unknown): void };

scope.onmessage = async (ev: MessageEvent<{ seat: DeviceSeat; inside: SharedArrayBuffer; runs: number }>) => {
  const turns = new DeviceTurns(ev.data.seat);
  const inside = new Int32Array(ev.data.inside);
  let overlaps = 0;
  for (let i = 0; i < ev.data.runs; i++) {
    await turns.run(async () => {
      if (Atomics.add(inside, 0, 1) !== 0) overlaps++;
      // Time for the other thread to try to come in.
      await new Promise((resolve) => setTimeout(resolve, 1));
      Atomics.sub(inside, 0, 1);
    });
  }
  scope.postMessage({ runs: ev.data.runs, overlaps });
};
