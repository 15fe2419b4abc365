import { expect, test } from "bun:test";
import { nextTurn } from "../../../src/modelgen/next-turn.ts";

test("nextTurn lets the loop take a turn: a timer already due and queued I/O callbacks run before it resolves", async () => {
  const ran: string[] = [];
  setTimeout(() => ran.push("timer"), 0);
  queueMicrotask(() => ran.push("microtask"));
  await nextTurn();
  ran.push("after");
  expect(ran).toEqual(["microtask", "timer", "after"]);
});
