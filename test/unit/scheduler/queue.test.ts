// The pure request queue: a cost budget, atomic group admission, FIFO dispatch to free slots, cancel and finish.
import { describe, expect, test } from "bun:test";
import type { ServiceTier } from "../../../src/inference/service-tier.ts";
import { affinityKey, pickSlot, RequestQueue } from "../../../src/scheduler/queue.ts";

const entry = (id: string, model = "m-1", cost = 1) => ({ id, model, cost, payload: id, queuedAt: 0 });

describe("RequestQueue", () => {
  test("admits up to the budget of active + waiting", () => {
    const q = new RequestQueue<string>(2);
    expect(q.admit([entry("a")])).toEqual({ ok: true });
    expect(q.admit([entry("b")])).toEqual({ ok: true });
    expect(q.admit([entry("c")])).toEqual({ ok: false, reason: "overloaded" });
    q.dispatch([{ workerId: 1, model: "m-1", free: 1 }], 5);
    expect(q.size).toEqual({ waiting: 1, active: 1 });
    expect(q.admit([entry("c")]).ok).toBe(false);
    q.finish("a");
    expect(q.room()).toBe(1);
    expect(q.admit([entry("c")]).ok).toBe(true);
  });

  test("waitingByModel counts entries not yet dispatched, per model", () => {
    const q = new RequestQueue<string>(10);
    q.admit([entry("a"), entry("b"), entry("c", "m-2")]);
    expect(q.waitingByModel()).toEqual(new Map([["m-1", 2], ["m-2", 1]]));
    q.dispatch([{ workerId: 1, model: "m-1", free: 1 }], 1);
    expect(q.waitingByModel()).toEqual(new Map([["m-1", 1], ["m-2", 1]]));
    q.cancel("c");
    expect(q.waitingByModel()).toEqual(new Map([["m-1", 1]]));
  });

  test("a group is admitted whole or not at all", () => {
    const q = new RequestQueue<string>(3);
    q.admit([entry("a")]);
    expect(q.admit([entry("b"), entry("c"), entry("d")])).toEqual({ ok: false, reason: "overloaded" });
    expect(q.size).toEqual({ waiting: 1, active: 0 });
    expect(q.room()).toBe(2);
    expect(q.admit([entry("b"), entry("c")]).ok).toBe(true);
    expect(q.size.waiting).toBe(3);
    expect(q.room()).toBe(0);
  });

  test("admission counts each entry's cost, not one unit per entry, and frees it on cancel and finish", () => {
    const q = new RequestQueue<string>(10);
    expect(q.admit([entry("img", "m-1", 8)]).ok).toBe(true);
    expect(q.room()).toBe(2);
    expect(q.admit([entry("big", "m-1", 3)]).ok).toBe(false);
    expect(q.admit([entry("t1"), entry("t2")]).ok).toBe(true);
    expect(q.room()).toBe(0);
    expect(q.cancel("img")).toBeNull();
    expect(q.room()).toBe(8);
    q.dispatch([{ workerId: 1, model: "m-1", free: 1 }], 0);
    expect(q.room()).toBe(8);
    q.finish("t1");
    expect(q.room()).toBe(9);
    // Finishing twice, or an id never dispatched, frees nothing more.
    q.finish("t1");
    q.finish("t2");
    expect(q.room()).toBe(9);
  });

  test("dispatches oldest first, only to workers of the entry's model, spreading by free slots", () => {
    const q = new RequestQueue<string>(10);
    for (const e of [entry("a"), entry("b", "other-1"), entry("c"), entry("d")]) q.admit([e]);
    const out = q.dispatch(
      [
        { workerId: 1, model: "m-1", free: 1 },
        { workerId: 2, model: "m-1", free: 2 },
      ],
      7,
    );
    expect(out.map((o) => [o.entry.id, o.workerId])).toEqual([["a", 2], ["c", 1], ["d", 2]]);
    expect(out[0]!.entry.batchedAt).toBe(7);
    expect(q.size).toEqual({ waiting: 1, active: 3 });
    expect(q.waitingFor("other-1")).toEqual(["b"]);
    expect(q.waitingFor("m-1")).toEqual([]);
  });

  test("a cancelled waiting entry is dropped before batching; a running one reports its worker", () => {
    const q = new RequestQueue<string>(10);
    q.admit([entry("a")]);
    q.admit([entry("b")]);
    q.dispatch([{ workerId: 3, model: "m-1", free: 1 }], 0);
    expect(q.cancel("b")).toBeNull();
    expect(q.size).toEqual({ waiting: 0, active: 1 });
    expect(q.dispatch([{ workerId: 3, model: "m-1", free: 5 }], 0)).toEqual([]);
    expect(q.cancel("a")).toEqual({ workerId: 3 });
    expect(q.finish("a")?.id).toBe("a");
    expect(q.finish("a")).toBeUndefined();
    expect(q.room()).toBe(10);
  });
});

describe("prefix affinity", () => {
  const slots = (a: number, b: number) => [
    { workerId: 1, model: "m-1", free: a },
    { workerId: 2, model: "m-1", free: b },
  ];
  test("an entry goes where its key went last while that worker has half the best free slots; else the least loaded", () => {
    expect(pickSlot(slots(2, 4), "m-1", 1)?.workerId).toBe(1);
    expect(pickSlot(slots(1, 4), "m-1", 1)?.workerId).toBe(2);
    expect(pickSlot(slots(0, 4), "m-1", 1)?.workerId).toBe(2);
    expect(pickSlot(slots(2, 4), "m-1", undefined)?.workerId).toBe(2);
    expect(pickSlot(slots(0, 0), "m-1", 1)).toBeUndefined();
  });

  test("the queue sends a key's entries to the worker that took it; keys are per scope and opening tokens", () => {
    const q = new RequestQueue<string>(100);
    const key = affinityKey("team:1", Array.from({ length: 100 }, (_, i) => i));
    expect(key).toBe(affinityKey("team:1", [...Array.from({ length: 64 }, (_, i) => i), 7, 7, 7]));
    expect(key).not.toBe(affinityKey("team:2", Array.from({ length: 100 }, (_, i) => i)));
    expect(affinityKey(undefined, [1, 2, 3])).toBeUndefined();
    q.admit([{ id: "a", model: "m-1", cost: 1, payload: "a", queuedAt: 0, affinity: key }]);
    expect(q.dispatch(slots(3, 4), 0).map((d) => d.workerId)).toEqual([2]);
    q.admit([{ id: "b", model: "m-1", cost: 1, payload: "b", queuedAt: 0, affinity: key }]);
    expect(q.dispatch(slots(4, 3), 0).map((d) => d.workerId)).toEqual([2]);
    q.admit([{ id: "c", model: "m-1", cost: 1, payload: "c", queuedAt: 0 }]);
    expect(q.dispatch(slots(4, 3), 0).map((d) => d.workerId)).toEqual([1]);
  });
});

describe("lanes", () => {
  const laned = (id: string, lane?: ServiceTier, model = "m-1") => ({ id, model, cost: 1, payload: id, queuedAt: 0, ...(lane ? { lane } : {}) });

  test("waiting entries leave lane by lane (priority, default, then flex and batch together), oldest first within a lane", () => {
    const q = new RequestQueue<string>(20);
    for (const [id, lane] of [["b1", "batch"], ["d1", undefined], ["f1", "flex"], ["p1", "priority"], ["d2", "default"], ["b2", "batch"]] as const) q.admit([laned(id, lane)]);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) order.push(...q.dispatch([{ workerId: 1, model: "m-1", free: 1, spare: 1 }], i).map((d) => d.entry.id));
    expect(order).toEqual(["p1", "d1", "d2", "b1", "f1", "b2"]);
  });

  test("waiting depth by model and lane (for /metrics): an entry without a lane counts as default; dispatched ones leave it", () => {
    const q = new RequestQueue<string>(20);
    for (const [id, lane, model] of [["b1", "batch", "m-1"], ["d1", undefined, "m-1"], ["d2", "default", "m-1"], ["b2", "batch", "m-2"], ["p1", "priority", "m-1"]] as const) q.admit([laned(id, lane, model)]);
    const depth = () => q.waitingByLane().sort((a, b) => `${a.model}${a.tier}`.localeCompare(`${b.model}${b.tier}`));
    expect(depth()).toEqual([
      { model: "m-1", tier: "batch", depth: 1 }, { model: "m-1", tier: "default", depth: 2 }, { model: "m-1", tier: "priority", depth: 1 }, { model: "m-2", tier: "batch", depth: 1 },
    ]);
    q.dispatch([{ workerId: 1, model: "m-1", free: 2, spare: 0 }], 0);
    expect(depth()).toEqual([{ model: "m-1", tier: "batch", depth: 1 }, { model: "m-1", tier: "default", depth: 1 }, { model: "m-2", tier: "batch", depth: 1 }]);
  });

  test("background entries take spare rows only; interactive ones take free rows beyond them", () => {
    const q = new RequestQueue<string>(20);
    q.admit([laned("f1", "flex")]);
    q.admit([laned("b1", "batch")]);
    q.admit([laned("d1")]);
    // A worker whose rows background work holds: it still takes the interactive entry, and no background one.
    const busy = [{ workerId: 1, model: "m-1", free: 3, spare: 0 }];
    expect(q.dispatch(busy, 0).map((d) => d.entry.id)).toEqual(["d1"]);
    expect(busy[0]).toEqual({ workerId: 1, model: "m-1", free: 2, spare: 0 });
    // One spare row: one background entry, which leaves the interactive rows as they were.
    const one = [{ workerId: 1, model: "m-1", free: 2, spare: 1 }];
    expect(q.dispatch(one, 1).map((d) => d.entry.id)).toEqual(["f1"]);
    expect(one[0]).toEqual({ workerId: 1, model: "m-1", free: 2, spare: 0 });
    // A backend that does not count lanes (no spare): background entries take free rows like the rest.
    expect(q.dispatch([{ workerId: 2, model: "m-1", free: 1 }], 2).map((d) => d.entry.id)).toEqual(["b1"]);
  });

  test("background entries never hold the interactive reserve: an interactive request is admitted when they are refused", () => {
    const q = new RequestQueue<string>(8, 25);
    for (let i = 0; i < 6; i++) expect(q.admit([laned(`b${i}`, i % 2 ? "flex" : "batch")]).ok).toBe(true);
    expect(q.admit([laned("b6", "batch")])).toEqual({ ok: false, reason: "overloaded" });
    // A group with any background entry counts its background part against the background share.
    expect(q.admit([laned("x1", "flex"), laned("x2", "flex")]).ok).toBe(false);
    expect(q.admit([laned("d1"), laned("d2")]).ok).toBe(true);
    expect(q.admit([laned("d3")]).ok).toBe(false);
    // A background entry that ends gives its share back.
    q.cancel("b0");
    expect(q.admit([laned("b6", "batch")]).ok).toBe(true);
  });

  test("without a reserve, background entries may fill the whole budget (as before lanes)", () => {
    const q = new RequestQueue<string>(2);
    expect(q.admit([laned("b1", "batch"), laned("b2", "flex")]).ok).toBe(true);
  });
});
