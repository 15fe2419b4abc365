// A worker's shutdown frees its model only once nothing runs on it: after the pass in flight ends, never during it, and
// on the webgpu device in the worker's turn, so a release never overlaps another worker's pass on the shared device
// context (two workers ending at once corrupted the process's heap). Real workers on the real lifecycle, a flag for
// a model (fixtures/lifecycle-worker.ts).
import { describe, expect, test } from "bun:test";
import { DeviceTurnTable, type DeviceSeat } from "../../src/devices/device-turns.ts";

const URL_ = new URL("./fixtures/lifecycle-worker.ts", import.meta.url);

interface Msg {
  type: string;
  passOpen?: boolean;
  loaded?: boolean;
  refused?: boolean;
}

/** A lifecycle worker that keeps every message it sent, in order, with a way to wait for one of a type. */
function spawn(log: string[], name: string) {
  const worker = new Worker(URL_);
  const seen: Msg[] = [];
  const waiters: { type: string; resolve: (m: Msg) => void }[] = [];
  worker.onmessage = (ev: MessageEvent<Msg>) => {
    seen.push(ev.data);
    log.push(`${name}:${ev.data.type}`);
    for (const w of waiters.filter((w) => w.type === ev.data.type)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(ev.data);
    }
  };
  const closed = new Promise<void>((resolve) => worker.addEventListener("close", () => resolve()));
  const next = (type: string) => new Promise<Msg>((resolve) => {
    const had = seen.find((m) => m.type === type);
    if (had) resolve(had);
    else waiters.push({ type, resolve });
  });
  return {
    worker,
    seen,
    closed,
    next,
    async load(seat?: DeviceSeat) {
      worker.postMessage({ type: "load", model: { id: "flag" }, ...(seat ? { seat } : {}) });
      await next("loaded");
    },
  };
}

const gate = () => new SharedArrayBuffer(4);
const open = (g: SharedArrayBuffer) => {
  Atomics.store(new Int32Array(g), 0, 1);
  Atomics.notify(new Int32Array(g), 0);
};

describe("a worker's shutdown releases its model after its last pass", () => {
  test("a shutdown during a pass: the pass ends, no pass starts after it, then the model is freed and the thread ends", async () => {
    const log: string[] = [];
    const w = spawn(log, "w");
    await w.load();
    const g = gate();
    // The pass, once let go, stays open until the worker has taken the shutdown in.
    w.worker.postMessage({ type: "work", gate: g, untilStopping: true });
    await w.next("pass_started");
    w.worker.postMessage({ type: "shutdown" });
    open(g);
    await w.closed;
    expect(log.filter((l) => l !== "w:second_pass")).toEqual(["w:loaded", "w:pass_started", "w:pass_ended", "w:released"]);
    expect(w.seen.find((m) => m.type === "second_pass")!.refused).toBe(true);
    expect(w.seen.find((m) => m.type === "released")).toMatchObject({ passOpen: false, loaded: true });
  });

  test("a worker with nothing running frees its model at once", async () => {
    const log: string[] = [];
    const w = spawn(log, "w");
    await w.load();
    w.worker.postMessage({ type: "shutdown" });
    await w.closed;
    expect(log).toEqual(["w:loaded", "w:released"]);
  });

  test("on the device, a release waits for another worker's pass to give up the turn", async () => {
    const table = new DeviceTurnTable(4);
    const log: string[] = [];
    const a = spawn(log, "a");
    const b = spawn(log, "b");
    await a.load(table.claim());
    const bSeat = table.claim();
    await b.load(bSeat);
    const g = gate();
    a.worker.postMessage({ type: "work", gate: g, untilStopping: false });
    await a.next("pass_started");
    b.worker.postMessage({ type: "shutdown" });
    // b's release asks for the turn that a's pass holds: its seat shows it waiting (the table's slot 1 + seat).
    const slots = new Int32Array(bSeat.buffer);
    while (Atomics.load(slots, 1 + bSeat.seat) !== 1) await new Promise((resolve) => setImmediate(resolve));
    expect(log).not.toContain("b:released");
    open(g);
    await b.closed;
    expect(log.filter((l) => /pass_ended|released/.test(l))).toEqual(["a:pass_ended", "b:released"]);
    a.worker.postMessage({ type: "shutdown" });
    await a.closed;
    expect(log.at(-1)).toBe("a:released");
  });
});
