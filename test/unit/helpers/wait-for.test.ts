// The tests' condition wait: returns the value as soon as it holds, and fails at its deadline saying what it awaited.
import { describe, expect, test } from "bun:test";
import { waitFor } from "../../helpers/wait-for.ts";

describe("waitFor", () => {
  test("returns the first value that passes, polling until then (async probes too)", async () => {
    let calls = 0;
    expect(await waitFor(() => (++calls >= 3 ? "ready" : ""), { what: "the third call", intervalMs: 1 })).toBe("ready");
    expect(calls).toBe(3);
    const rows: number[] = [];
    setTimeout(() => rows.push(1, 2), 5);
    expect(await waitFor(async () => [...rows], { what: "two rows", until: (r) => r.length === 2, intervalMs: 1 })).toEqual([1, 2]);
  });

  test("a condition that holds at once costs no wait", async () => {
    const t0 = performance.now();
    expect(await waitFor(() => 7, { what: "seven", intervalMs: 1000 })).toBe(7);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  test("at the deadline it fails naming what it waited for and the last value it saw", async () => {
    const failure = await waitFor(() => ({ rows: [] as number[] }), { what: "a usage row", until: (v) => v.rows.length > 0, timeoutMs: 30, intervalMs: 5 }).catch((e: Error) => e);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('waited 30 ms for a usage row; last saw {"rows":[]}');
  });

  test("a probe that throws ends the wait with its error", async () => {
    const failure = await waitFor(() => {
      throw new Error("no such table");
    }, { what: "rows" }).catch((e: Error) => e.message);
    expect(failure).toBe("no such table");
  });
});
