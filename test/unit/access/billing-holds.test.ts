// Billing holds: worst-case prices held against the balance, released once, journaled charges counted until they are
// written; missing and lapsed accounts refused.
import { describe, expect, test } from "bun:test";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { replaySettlements } from "../../../src/billing/settle.ts";
import { appendSettlement, journalPathFor } from "../../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { localDirOf, openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
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
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 900, null);
    const first = await s.holds.hold(s.team.id, 410, "a");
    await s.holds.hold(s.team.id, 410, "b");
    const refused = await s.holds.hold(s.team.id, 410, "10 input + up to 100 output tokens of m").catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 402, type: "billing_error", code: "billing_not_configured" });
    expect((refused as Error).message).toBe(
      "This team's balance cannot cover this request: it may cost up to 0.00041 (10 input + up to 100 output tokens of m), and 0.00008 is available. Add credit, or lower the maximum output tokens.",
    );
    expect(s.holds.heldBy(s.team.id)).toBe(820);
    // A release gives its share back once, however often it is called.
    first();
    first();
    expect(s.holds.heldBy(s.team.id)).toBe(410);
    await expect(s.holds.hold(s.team.id, 410, "c")).resolves.toBeDefined();
  });

  test("a charge waiting in the settlement journal counts against the balance until it is written, and then once", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
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
    await expect(s.holds.hold(s.team.id, 301, "x")).rejects.toThrow("and 0.0003 is available");
    const release = await s.holds.hold(s.team.id, 300, "y");
    release();
    // Written to the database: the balance carries the charges, the journal no longer does, so they count once.
    expect((await replaySettlements(s.db, memoryLogger())).replayed).toBe(3);
    expect(s.holds.journaledBy(s.team.id)).toBe(0);
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(300);
    await expect(s.holds.hold(s.team.id, 301, "x")).rejects.toThrow("and 0.0003 is available");
    await expect(s.holds.hold(s.team.id, 300, "y")).resolves.toBeDefined();
  });

  test("no account, or a lapsed one, refuses every hold", async () => {
    const s = await setup();
    await expect(s.holds.hold(s.team.id, 0, "x")).rejects.toThrow("it has no billing account");
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    await setLapsed(s.db, s.team.id, true);
    await expect(s.holds.checkAccount(s.team.id)).rejects.toThrow("has lapsed");
    await expect(s.holds.hold(s.team.id, 1, "x")).rejects.toThrow("has lapsed");
    await setLapsed(s.db, s.team.id, false);
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(1000);
  });

  test("a request that settles while a hold reads the balance is not counted twice as available", async () => {
    const s = await setup();
    await setBillingEnabled(s.db, s.team.id, true);
    await credit(s.db, s.team.id, 1000, null);
    const key = await createKey(s.db, s.team.id, "k");
    const releaseA = await s.holds.hold(s.team.id, 600, "a");
    // B begins reading the balance (1000, with A's 600 held); before its read is back, A is charged its 600 and releases.
    const b = s.holds.hold(s.team.id, 600, "b");
    const settled = recordSettlement(s.db, {
      requestId: "req_a", teamId: s.team.id, keyId: key.id, model: "m", endpoint: "chat", status: "completed",
      inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 600,
    });
    releaseA();
    // Only 400 is left: B may not take 600 of it, whichever balance its read saw.
    await expect(b).rejects.toThrow("and 0.0004 is available");
    await settled;
    expect((await s.holds.checkAccount(s.team.id)).balanceMicros).toBe(400);
    expect(s.holds.heldBy(s.team.id)).toBe(0);
    // Two holds reading the balance (400) at once: the one taken first counts for the other.
    const c = s.holds.hold(s.team.id, 300, "c");
    const d = s.holds.hold(s.team.id, 300, "d");
    await expect(d).rejects.toThrow("and 0.0001 is available");
    (await c)();
    expect(s.holds.heldBy(s.team.id)).toBe(0);
  });
});
