import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { chargeUsage, credit, findAccount, ledgerOf, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { billingAccounts, usage } from "../../../src/db/schema.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { recordUsage, usageByDay } from "../../../src/db/usage-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "acme");
  const key = await createKey(db, team.id, "k");
  const row = (requestId: string, model: string, costMicros: number, inputTokens = 10, outputTokens = 5) => ({
    requestId, teamId: team.id, keyId: key.id, model, endpoint: "chat", status: "completed" as const,
    inputTokens, outputTokens, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros,
  });
  return { db, team, key, row };
}

describe("billing accounts and the ledger", () => {
  test("enable opens a zero-balance account; credits add with their balance after; charges only while billing is on", async () => {
    const { db, team, row } = await setup();
    recordUsage(db, row("req_free", "m-1", 7));
    chargeUsage(db, team.id, "req_free", 7);
    expect(findAccount(db, team.id)).toBeUndefined();
    setBillingEnabled(db, team.id, true);
    expect(findAccount(db, team.id)!.balanceMicros).toBe(0);
    expect(credit(db, team.id, 1000, "first")).toBe(1000);
    db.transaction((tx) => {
      recordUsage(tx, row("req_1", "m-1", 300));
      chargeUsage(tx, team.id, "req_1", 300);
    });
    expect(credit(db, team.id, 50, null)).toBe(750);
    expect(ledgerOf(db, team.id, 10).map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros, e.requestId, e.note])).toEqual([
      ["credit", 50, 750, null, null],
      ["charge", -300, 700, "req_1", null],
      ["credit", 1000, 1000, null, "first"],
    ]);
    expect(ledgerOf(db, team.id, 1, ledgerOf(db, team.id, 1)[0]!.id).map((e) => e.kind)).toEqual(["charge"]);
    setBillingEnabled(db, team.id, false);
    recordUsage(db, row("req_2", "m-1", 9));
    chargeUsage(db, team.id, "req_2", 9);
    expect(findAccount(db, team.id)!.balanceMicros).toBe(750);
  });

  test("a charge that fails rolls back its usage row with it (one transaction)", async () => {
    const { db, team, row } = await setup();
    setBillingEnabled(db, team.id, true);
    recordUsage(db, row("req_dup", "m-1", 1));
    chargeUsage(db, team.id, "req_dup", 1);
    expect(() =>
      db.transaction((tx) => {
        recordUsage(tx, row("req_new", "m-1", 5));
        // The ledger keeps one charge per request: a second one for req_dup fails, and req_new's row goes too.
        chargeUsage(tx, team.id, "req_dup", 5);
      }),
    ).toThrow();
    expect(db.select().from(usage).where(eq(usage.requestId, "req_new")).all()).toEqual([]);
    expect(db.select().from(billingAccounts).get()!.balanceMicros).toBe(-1);
  });

  test("lapse and reinstate; no account, nothing to lapse; credits must be positive whole micro-units", async () => {
    const { db, team } = await setup();
    expect(setLapsed(db, team.id, true)).toBe(false);
    setBillingEnabled(db, team.id, true);
    expect(setLapsed(db, team.id, true)).toBe(true);
    expect(findAccount(db, team.id)!.lapsedAt).toBeNumber();
    setLapsed(db, team.id, false);
    expect(findAccount(db, team.id)!.lapsedAt).toBeNull();
    expect(() => credit(db, team.id, 0, null)).toThrow(RangeError);
    expect(() => credit(db, team.id, 1.5, null)).toThrow(RangeError);
  });
});

describe("usage per team, model and day", () => {
  test("sums per UTC day, team and model; filters by team and inclusive days", async () => {
    const { db, team, key, row } = await setup();
    const other = await createTeam(db, "other");
    const day = (d: string) => Math.floor(Date.parse(`${d}Z`) / 1000);
    const put = (r: ReturnType<typeof row>, at: string, teamId = team.id) => db.insert(usage).values({ ...r, teamId, keyId: key.id, createdAt: day(at) }).run();
    put({ ...row("a", "m-1", 10, 100, 10), cachedTokens: 48 }, "2026-03-01T00:00:00");
    put({ ...row("b", "m-1", 20, 200, 20), cachedTokens: 160 }, "2026-03-01T23:59:59");
    put(row("c", "m-2", 5), "2026-03-01T12:00:00");
    put(row("d", "m-1", 1), "2026-03-02T00:00:00");
    put(row("e", "m-1", 7), "2026-03-01T08:00:00", other.id);
    expect(usageByDay(db)).toEqual([
      { day: "2026-03-01", team: "acme", model: "m-1", requests: 2, inputTokens: 300, cachedTokens: 208, outputTokens: 30, images: 0, costMicros: 30 },
      { day: "2026-03-01", team: "acme", model: "m-2", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 5 },
      { day: "2026-03-01", team: "other", model: "m-1", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 7 },
      { day: "2026-03-02", team: "acme", model: "m-1", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 1 },
    ]);
    expect(usageByDay(db, { teamId: other.id }).map((r) => r.team)).toEqual(["other"]);
    expect(usageByDay(db, { since: "2026-03-02" }).map((r) => r.day)).toEqual(["2026-03-02"]);
    expect(usageByDay(db, { until: "2026-03-01", teamId: team.id }).map((r) => r.model)).toEqual(["m-1", "m-2"]);
  });
});
