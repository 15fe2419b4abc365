// The batch picker: one group per pass, the longest-waiting render leads, the row limit, guidance rows.
import { describe, expect, test } from "bun:test";
import { type Candidate, pickRows } from "../../../../workers/image/batch-picker.ts";

const c = (id: string, key: string, lastServed: number, seq: number, pending: Candidate["pending"] = ["cond"]): Candidate => ({ id, key, lastServed, seq, pending });
const ids = (rows: { id: string; kind: string }[]) => rows.map((r) => `${r.id}.${r.kind}`);

describe("pickRows", () => {
  test("nothing pending, nothing picked", () => {
    expect(pickRows([], 4)).toEqual([]);
    expect(pickRows([c("a", "k", 0, 0, [])], 4)).toEqual([]);
  });

  test("only rows of the leader's group share the pass", () => {
    const rows = pickRows([c("a", "64", 0, 0), c("b", "32", 0, 1), c("c", "64", 0, 2)], 8);
    expect(ids(rows)).toEqual(["a.cond", "c.cond"]);
  });

  test("the longest-waiting render leads, so groups take turns", () => {
    // a and c were served in pass 3; b (another size) last in pass 2: b's group goes next.
    const rows = pickRows([c("a", "64", 3, 0), c("b", "32", 2, 1), c("c", "64", 3, 2), c("d", "32", 3, 3)], 8);
    expect(ids(rows)).toEqual(["b.cond", "d.cond"]);
  });

  test("ties go to the earlier arrival; older renders fill first", () => {
    const rows = pickRows([c("late", "k", 1, 5), c("early", "k", 1, 2), c("oldest", "k", 0, 9)], 2);
    expect(ids(rows)).toEqual(["oldest.cond", "early.cond"]);
  });

  test("guidance renders take two rows; the limit can split a render's rows", () => {
    const g = ["uncond", "cond"] as Candidate["pending"];
    expect(ids(pickRows([c("a", "k", 0, 0, g), c("b", "k", 0, 1, g)], 4))).toEqual(["a.uncond", "a.cond", "b.uncond", "b.cond"]);
    expect(ids(pickRows([c("a", "k", 0, 0, g), c("b", "k", 0, 1, g)], 3))).toEqual(["a.uncond", "a.cond", "b.uncond"]);
    expect(ids(pickRows([c("a", "k", 0, 0, g)], 1))).toEqual(["a.uncond"]);
  });

  test("a render with only its second row pending gives just that row", () => {
    expect(ids(pickRows([c("a", "k", 0, 0, ["cond"]), c("b", "k", 1, 1, ["uncond", "cond"])], 4))).toEqual(["a.cond", "b.uncond", "b.cond"]);
  });

  test("over many passes no group starves", () => {
    // Three groups; each pass serves the picked renders (their lastServed becomes the pass number).
    const all = [c("a", "A", 0, 0), c("b", "A", 0, 1), c("x", "B", 0, 2), c("y", "C", 0, 3)];
    const served = new Map<string, number>();
    for (let pass = 1; pass <= 30; pass++) {
      for (const r of pickRows(all, 2)) {
        all.find((x) => x.id === r.id)!.lastServed = pass;
        served.set(r.id, (served.get(r.id) ?? 0) + 1);
      }
    }
    expect(Object.fromEntries(served)).toEqual({ a: 10, b: 10, x: 10, y: 10 });
  });
});
