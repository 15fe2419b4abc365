// The hold bookkeeping both stores follow (the Redis one in Lua): what counts against a budget, and the decision.
import { expect, test } from "bun:test";
import { decide, heldSince, MemoryHoldStore, RELEASED_KEPT_MS } from "../../../src/access/hold-store.ts";

test("heldSince: every running hold, and only the releases after the mark", () => {
  expect(heldSince([100, 50], [{ micros: 7, seq: 3 }, { micros: 9, seq: 4 }], 3)).toBe(159);
  expect(heldSince([], [{ micros: 7, seq: 3 }], 3)).toBe(0);
});

test("decide: a hold equal to what is available fits; one unit more does not, and says what was available", () => {
  expect(decide(400, 1000, 600)).toEqual({ ok: true, available: 0 });
  expect(decide(401, 1000, 600)).toEqual({ ok: false, available: 400 });
  // Journaled charges can put the budget below zero.
  expect(decide(1, -50, 0)).toEqual({ ok: false, available: -50 });
});

test("the memory store forgets a release once no mark can be older than it", async () => {
  let t = 0;
  const store = new MemoryHoldStore(() => t);
  await store.hold(1, "a", 10, 10, 0);
  const old = await store.mark(1);
  await store.release(1, "a");
  t += RELEASED_KEPT_MS - 1;
  expect(await store.hold(1, "b", 1, 10, old)).toEqual({ ok: false, available: 0 });
  t += 2;
  expect(await store.hold(1, "b", 1, 10, old)).toEqual({ ok: true, available: 9 });
});
