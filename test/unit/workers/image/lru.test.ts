// The small LRU cache: eviction order, refresh on get and on overwrite.
import { expect, test } from "bun:test";
import { Lru } from "../../../../workers/image/lru.ts";

test("evicts the least recently used beyond capacity", () => {
  const lru = new Lru<string, number>(2);
  lru.set("a", 1);
  lru.set("b", 2);
  lru.set("c", 3);
  expect([lru.has("a"), lru.get("b"), lru.get("c"), lru.size]).toEqual([false, 2, 3, 2]);
});

test("a get refreshes an entry", () => {
  const lru = new Lru<string, number>(2);
  lru.set("a", 1);
  lru.set("b", 2);
  expect(lru.get("a")).toBe(1);
  lru.set("c", 3);
  expect([lru.get("a"), lru.has("b"), lru.get("c")]).toEqual([1, false, 3]);
});

test("overwriting refreshes and replaces; a missing key is undefined", () => {
  const lru = new Lru<string, number>(2);
  lru.set("a", 1);
  lru.set("b", 2);
  lru.set("a", 10);
  lru.set("c", 3);
  expect([lru.get("a"), lru.has("b"), lru.get("zzz")]).toEqual([10, false, undefined]);
});

test("refuses a zero capacity", () => {
  expect(() => new Lru(0)).toThrow("capacity");
});
