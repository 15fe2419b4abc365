// Billing holds: worst-case prices held against the balance, released once, journaled charges counted until they are
// written; missing and lapsed accounts refused.
import { describe, expect, test } from "bun:test";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { replaySettlements } from "../../../src/billing/settle.ts";
import { appendSettlement, journalPathFor } from "../../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { localDirOf, openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir("kiln-holds-"));
  const team = await createTeam(db, "t");
  return { db, team, holds: new BillingHolds(db) };
}

describe("BillingHolds", () => {
  test("holds add up against the balance: the one that does not fit is refused with what it may cost and what is left", async () => {
    const s = await setup();
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

  test("a charge waiting in the settlement journal counts against the balance until it is written, and then once", async () => {
    const s = await setup();
    setBillingEnabled(s.db, s.team.id, true);
    credit(s.db, s.team.id, 1000, null);
    const other = await createTeam(s.db, "other");
    const journal = journalPathFor(localDirOf(s.db))!;
    const charge = async (teamId: number, requestId: string, costMicros: number) =>
      appendSettlement(journal, {
        requestId, teamId, keyId: (await createKey(s.db, teamId, requestId)).id, model: "m-v1", endpoint: "chat", status: "completed",
        inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros, createdAt: 1_767_225_600,
      });
    // The database refused two of the team's charges (and one of another team's): 700 of its 1000 is spent already.
    await charge(s.team.id, "req_a", 400);
    await charge(other.id, "req_x", 900);
    await charge(s.team.id, "req_b", 300);
    expect(s.holds.journaledBy(s.team.id)).toBe(700);
    expect(() => s.holds.hold(s.team.id, 301, "x")).toThrow("and 0.0003 is available");
    const release = s.holds.hold(s.team.id, 300, "y");
    release();
    // Written to the database: the balance carries the charges, the journal no longer does, so they count once.
    expect(replaySettlements(s.db, memoryLogger()).replayed).toBe(3);
    expect(s.holds.journaledBy(s.team.id)).toBe(0);
    expect(s.holds.checkAccount(s.team.id).balanceMicros).toBe(300);
    expect(() => s.holds.hold(s.team.id, 301, "x")).toThrow("and 0.0003 is available");
    expect(() => s.holds.hold(s.team.id, 300, "y")).not.toThrow();
  });

  test("no account, or a lapsed one, refuses every hold", async () => {
    const s = await setup();
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
