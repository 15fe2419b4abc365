// Billing accounts, the ledger and settlements (usage row + charge), and usage per day: on every dialect.
import { describe, expect, test } from "bun:test";
import { MAX_BALANCE_MICROS } from "../../../src/billing/money.ts";
import { credit, findAccount, ledgerOf, setBillingEnabled, setLapsed } from "../../../src/db/billing-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { type NewUsage, recordUsage, usageByDay } from "../../../src/db/usage-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const team = await createTeam(t.db, "acme");
  const key = await createKey(t.db, team.id, "k");
  const row = (requestId: string, model: string, costMicros: number, inputTokens = 10, outputTokens = 5) => ({
    requestId, teamId: team.id, keyId: key.id, model, endpoint: "chat", status: "completed" as const,
    inputTokens, outputTokens, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros,
  });
  return { ...t, team, key, row };
}

describe.each(DIALECTS)("billing accounts and the ledger ($name)", (dialect) => {
  test("enable opens a zero-balance account; credits add with their balance after; charges only while billing is on", async () => {
    const { db, team, row, close } = await setup(dialect);
    expect(await recordSettlement(db, row("req_free", "m-1", 7))).toBe(true);
    expect(await findAccount(db, team.id)).toBeUndefined();
    await setBillingEnabled(db, team.id, true);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(0);
    expect(await credit(db, team.id, 1000, "first")).toBe(1000);
    expect(await recordSettlement(db, row("req_1", "m-1", 300))).toBe(true);
    expect(await credit(db, team.id, 50, null)).toBe(750);
    expect((await ledgerOf(db, team.id, 10)).map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros, e.requestId, e.note])).toEqual([
      ["credit", 50, 750, null, null],
      ["charge", -300, 700, "req_1", null],
      ["credit", 1000, 1000, null, "first"],
    ]);
    expect((await ledgerOf(db, team.id, 1, (await ledgerOf(db, team.id, 1))[0]!.id)).map((e) => e.kind)).toEqual(["charge"]);
    await setBillingEnabled(db, team.id, false);
    expect(await recordSettlement(db, row("req_2", "m-1", 9))).toBe(true);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(750);
    await close();
  });

  test("a settlement is written once: the same request id again writes nothing and charges nothing", async () => {
    const { db, team, row, count, close } = await setup(dialect);
    await setBillingEnabled(db, team.id, true);
    expect(await recordSettlement(db, row("req_a", "m-1", 5))).toBe(true);
    expect(await recordSettlement(db, { ...row("req_a", "m-1", 500), status: "failed" })).toBe(false);
    expect(await count("usage")).toBe(1);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(-5);
    await close();
  });

  test("a charge that fails rolls back its usage row with it (one transaction)", async () => {
    const { db, team, row, count, failInserts, close } = await setup(dialect);
    await setBillingEnabled(db, team.id, true);
    await recordSettlement(db, row("req_ok", "m-1", 1));
    const restore = await failInserts("ledger");
    await expect(recordSettlement(db, row("req_new", "m-1", 5))).rejects.toThrow("database or disk is full");
    expect(await count("usage")).toBe(1);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(-1);
    await restore();
    expect(await recordSettlement(db, row("req_new", "m-1", 5))).toBe(true);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(-6);
    await close();
  });

  test("a credit past the balance limit is refused whole; racing credits cannot pass it together", async () => {
    const { db, team, count, close } = await setup(dialect);
    await credit(db, team.id, MAX_BALANCE_MICROS - 10, null);
    const results = await Promise.allSettled([credit(db, team.id, 6, "a"), credit(db, team.id, 6, "b")]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(MAX_BALANCE_MICROS - 4);
    expect(await count("ledger")).toBe(2);
    await close();
  });

  test("lapse and reinstate; no account, nothing to lapse; credits must be positive whole micro-units", async () => {
    const { db, team, close } = await setup(dialect);
    expect(await setLapsed(db, team.id, true)).toBe(false);
    await setBillingEnabled(db, team.id, true);
    expect(await setLapsed(db, team.id, true)).toBe(true);
    expect((await findAccount(db, team.id))!.lapsedAt).toBeNumber();
    await setLapsed(db, team.id, false);
    expect((await findAccount(db, team.id))!.lapsedAt).toBeNull();
    await expect(credit(db, team.id, 0, null)).rejects.toThrow(RangeError);
    await expect(credit(db, team.id, 1.5, null)).rejects.toThrow(RangeError);
    await close();
  });
});

describe.each(DIALECTS)("usage per team, model, service tier and day ($name)", (dialect) => {
  test("sums per UTC day, team, model and service tier; filters by team and inclusive days", async () => {
    const { db, team, key, row, close } = await setup(dialect);
    const other = await createTeam(db, "other");
    const day = (d: string) => Math.floor(Date.parse(`${d}Z`) / 1000);
    const put = (r: NewUsage, at: string, teamId = team.id) => recordUsage(db, { ...r, teamId, keyId: key.id, createdAt: day(at) });
    await put({ ...row("a", "m-1", 10, 100, 10), cachedTokens: 48 }, "2026-03-01T00:00:00");
    await put({ ...row("b", "m-1", 20, 200, 20), cachedTokens: 160 }, "2026-03-01T23:59:59");
    await put(row("c", "m-2", 5), "2026-03-01T12:00:00");
    await put(row("d", "m-1", 1), "2026-03-02T00:00:00");
    await put(row("e", "m-1", 7), "2026-03-01T08:00:00", other.id);
    await put({ ...row("f", "m-1", 3), serviceTier: "batch", priceFactorMilli: 500 }, "2026-03-01T09:00:00");
    expect(await usageByDay(db)).toEqual([
      { day: "2026-03-01", team: "acme", model: "m-1", serviceTier: "batch", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 3 },
      { day: "2026-03-01", team: "acme", model: "m-1", serviceTier: "default", requests: 2, inputTokens: 300, cachedTokens: 208, outputTokens: 30, images: 0, costMicros: 30 },
      { day: "2026-03-01", team: "acme", model: "m-2", serviceTier: "default", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 5 },
      { day: "2026-03-01", team: "other", model: "m-1", serviceTier: "default", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 7 },
      { day: "2026-03-02", team: "acme", model: "m-1", serviceTier: "default", requests: 1, inputTokens: 10, cachedTokens: 0, outputTokens: 5, images: 0, costMicros: 1 },
    ]);
    expect((await usageByDay(db, { teamId: other.id })).map((r) => r.team)).toEqual(["other"]);
    expect((await usageByDay(db, { since: "2026-03-02" })).map((r) => r.day)).toEqual(["2026-03-02"]);
    expect((await usageByDay(db, { until: "2026-03-01", teamId: team.id })).map((r) => r.model)).toEqual(["m-1", "m-1", "m-2"]);
    await close();
  });
});
