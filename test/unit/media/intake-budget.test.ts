// IntakeBudget, the server's bound on media bytes in flight: reservations within it are immediate, past it they wait
// in order, and a wait past its limit is a 503 service_overloaded with Retry-After in the spec's error shape.
import { describe, expect, test } from "bun:test";
import { IntakeBudget } from "../../../src/media/intake-budget.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";

/** Whether `p` has settled by the time queued callbacks have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("IntakeBudget", () => {
  test("reservations within the budget are granted at once; release gives the bytes back, once", async () => {
    const budget = new IntakeBudget(100, 1000);
    const a = await budget.take(60);
    const b = await budget.take(40);
    expect(budget.stats()).toEqual({ held: 100, waiting: 0 });
    a.release();
    a.release();
    expect(budget.stats().held).toBe(40);
    b.release();
    expect(budget.stats().held).toBe(0);
  });

  test("past the budget a request waits, in order, until enough is given back", async () => {
    const budget = new IntakeBudget(100, 60_000);
    const first = await budget.take(80);
    const second = budget.take(50);
    // A small one that would fit waits behind the earlier, larger one: no request is overtaken forever.
    const third = budget.take(10);
    expect([await settled(second), await settled(third), budget.stats().waiting]).toEqual([false, false, 2]);
    first.shrink(50);
    expect([await settled(second), budget.stats().held]).toEqual([true, 100]);
    expect(await settled(third)).toBe(false);
    first.release();
    expect(await settled(third)).toBe(true);
    expect(budget.stats()).toEqual({ held: 60, waiting: 0 });
  });

  test("a wait past its limit is a 503 service_overloaded with Retry-After, and its place is given up", async () => {
    const budget = new IntakeBudget(100, 30);
    const held = await budget.take(100);
    const e = await apiRefusal(budget.take(1));
    expect([e.status, e.type, e.code, e.param]).toEqual([503, "server_error", "service_overloaded", null]);
    expect(e.message).toContain("KILN_INTAKE_BUDGET_BYTES");
    expect(e.headers["retry-after"]).toBe("60");
    expect(budget.stats()).toEqual({ held: 100, waiting: 0 });
    held.release();
  });

  test("a client that leaves while waiting gives up its place, and those behind it move on", async () => {
    const budget = new IntakeBudget(100, 60_000);
    const held = await budget.take(50);
    const leaving = new AbortController();
    const big = budget.take(80, leaving.signal);
    const small = budget.take(20);
    expect(await settled(small)).toBe(false);
    leaving.abort(new Error("client left"));
    await expect(big).rejects.toThrow("client left");
    expect(await settled(small)).toBe(true);
    held.release();
  });

  test("an item larger than the whole budget is read alone", async () => {
    const budget = new IntakeBudget(100, 60_000);
    const huge = await budget.take(500);
    const next = budget.take(1);
    expect(await settled(next)).toBe(false);
    huge.release();
    expect(await settled(next)).toBe(true);
  });
});
