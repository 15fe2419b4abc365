// Billing holds: worst-case prices held against the balance, released once; missing and lapsed accounts refused.
import { describe, expect, test } from "bun:test";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { credit, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

function setup() {
  const db = openDatabase(tempDir("kiln-holds-"));
  const team = createTeam(db, "t");
  return { db, team, holds: new BillingHolds(db) };
}

describe("BillingHolds", () => {
  test("holds add up against the balance: the one that does not fit is refused with what it may cost and what is left", () => {
    const s = setup();
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 900, null);
    const first = s.holds.hold(s.team.id, 410, "a");
    s.holds.hold(s.team.id, 410, "b");
    const refused = (() => {
      try {
        s.holds.hold(s.team.id, 410, "10 input + up to 100 output tokens of m");
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toMatchObject({ status: 402, type: "billing_error", code: "billing_not_configured" });
    expect((refused as Error).message).toBe(
      "This team's balance cannot cover this request: it may cost up to 0.00041 (10 input + up to 100 output tokens of m), and 0.00008 is available. Add credit, or lower the maximum output tokens.",
    );
    expect(s.holds.heldBy(s.team.id)).toBe(820);
    // A release gives its share back once, however often it is called.
    first();
    first();
    expect(s.holds.heldBy(s.team.id)).toBe(410);
    expect(() => s.holds.hold(s.team.id, 410, "c")).not.toThrow();
  });

  test("no account, or a lapsed one, refuses every hold", () => {
    const s = setup();
    expect(() => s.holds.hold(s.team.id, 0, "x")).toThrow("it has no billing account");
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 1000, null);
    setLapsed(s.db, s.team.id, true);
    expect(() => s.holds.checkAccount(s.team.id)).toThrow("has lapsed");
    expect(() => s.holds.hold(s.team.id, 1, "x")).toThrow("has lapsed");
    setLapsed(s.db, s.team.id, false);
    expect(s.holds.checkAccount(s.team.id).balanceMicros).toBe(1000);
  });
});
