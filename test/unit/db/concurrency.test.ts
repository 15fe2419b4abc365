// What must hold when several replicas (two handles on one database) write at once: exact balances and a ledger whose
// every entry follows from the one before, one first team, a settlement written once, a response ended once per
// sequence number; on every dialect (SQLite serializes them by itself; Postgres by the locks the repositories take).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { MAX_BALANCE_MICROS } from "../../../src/billing/money.ts";
import { BalanceLimitError, credit, findAccount, ledgerOf, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import type { Db } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { endResponse, eventsAfter } from "../../../src/db/response-events-repo.ts";
import { insertResponse } from "../../../src/db/responses-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { countTeams, createFirstTeam, createTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { deleteTier, upsertTier } from "../../../src/db/tiers-repo.ts";
import { DIALECTS } from "../../helpers/databases.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const usageRow = (teamId: number, keyId: number, requestId: string, costMicros: number) => ({
  requestId, teamId, keyId, model: "m", endpoint: "chat", status: "completed" as const,
  inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros,
});

describe.each(DIALECTS)("two replicas writing at once ($name)", (dialect) => {
  test("charges and credits racing on two handles give the exact balance, and each ledger entry follows from the one before", async () => {
    const { db, another, close } = await dialect.open();
    const other = await another();
    const team = await createTeam(db, "acme");
    const key = await createKey(db, team.id, "k");
    await setBillingEnabled(db, team.id, true);
    await credit(db, team.id, 1_000_000, "start");
    const on = (i: number): Db => (i % 2 ? other : db);
    await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => recordSettlement(on(i), usageRow(team.id, key.id, `req_${i}`, 7 + i))),
      ...Array.from({ length: 10 }, (_, i) => credit(on(i), team.id, 100, `top-up ${i}`)),
    ]);
    const charged = Array.from({ length: 40 }, (_, i) => 7 + i).reduce((a, b) => a + b, 0);
    expect((await findAccount(other, team.id))!.balanceMicros).toBe(1_000_000 - charged + 1000);
    const ledger = (await ledgerOf(db, team.id, 100)).reverse();
    expect(ledger).toHaveLength(51);
    ledger.forEach((e, i) => {
      if (i > 0) expect({ id: e.id, after: e.balanceAfterMicros }).toEqual({ id: e.id, after: ledger[i - 1]!.balanceAfterMicros + e.amountMicros });
    });
    await close();
  });

  test("two first starts at once create one first team and one key; the other start creates nothing", async () => {
    const { db, another, count, close } = await dialect.open();
    const other = await another();
    const handed: string[] = [];
    const made = await Promise.all([db, other, db, other].map((d) => createFirstTeam(d, "default", "first key", (k) => void handed.push(k.key))));
    expect(made.filter((k) => k !== null)).toHaveLength(1);
    expect(handed).toEqual([made.find((k) => k !== null)!.key]);
    expect([await countTeams(db), await count("api_keys")]).toEqual([1, 1]);
    await close();
  });

  test("the same settlement replayed by two replicas at once is written and charged once", async () => {
    const { db, another, count, close } = await dialect.open();
    const other = await another();
    const team = await createTeam(db, "acme");
    const key = await createKey(db, team.id, "k");
    await setBillingEnabled(db, team.id, true);
    const written = await Promise.all([db, other, db, other].map((d) => recordSettlement(d, usageRow(team.id, key.id, "req_same", 5))));
    expect(written.filter(Boolean)).toHaveLength(1);
    expect([await count("usage"), await count("ledger")]).toEqual([1, 1]);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(-5);
    await close();
  });

  test("a response ended twice at once gets one closing event: the second ending waits for the first and finds it ended", async () => {
    const { db, another, close } = await dialect.open();
    const other = await another();
    const team = await createTeam(db, "acme");
    const key = await createKey(db, team.id, "k");
    await insertResponse(db, {
      id: "resp_1", teamId: team.id, keyId: key.id, model: "m", status: "in_progress", background: true, requestJson: "{}", responseJson: "{}",
      createdAt: 1, updatedAt: 1, expiresAt: 9e9,
    }, []);
    const end = (sequence: number) => ({ eventJson: JSON.stringify({ sequence }), set: { status: "failed", responseJson: "{}" } });
    const ended = await Promise.all([endResponse(db, "resp_1", end), endResponse(other, "resp_1", end)]);
    expect(ended.sort()).toEqual([false, true]);
    expect((await eventsAfter(db, "resp_1", -1)).map((e) => e.sequence)).toEqual([0]);
    await close();
  });
});

describe("Postgres's locks against another replica's open transaction", () => {
  const dialect = DIALECTS.find((d) => d.name === "postgres")!;

  test("a tier is not deleted while another replica is giving a team that tier: the delete waits, then sees the team", async () => {
    const { db, another, all, close } = await dialect.open();
    const other = await another();
    if (other.dialect !== "postgres") throw new Error("postgres only");
    await upsertTier(db, { name: "pro", rpm: 10, tpm: null });
    const team = await createTeam(db, "acme");
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let updated!: () => void;
    const inFlight = new Promise<void>((resolve) => (updated = resolve));
    // Another replica's `teams set --tier pro`, written but not yet committed.
    const tx = other.pg.$client.begin(async (t) => {
      await t`UPDATE teams SET tier = 'pro' WHERE id = ${team.id}`;
      updated();
      await released;
    });
    await inFlight;
    const deleting = deleteTier(db, "pro");
    await waitFor(async () => (await all<{ n: number }>(sql`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`))[0]!.n, {
      what: "deleteTier to wait on the other replica's write to teams",
      until: (n) => n >= 1,
    });
    release();
    await tx;
    expect(await deleting).toEqual({ deleted: false, usedBy: ["acme"] });
    // With no team naming it, the delete goes through.
    await updateTeam(db, team.id, { tier: null });
    expect(await deleteTier(db, "pro")).toEqual({ deleted: true, usedBy: [] });
    await close();
  });

  test("a credit waits for another replica's credit in flight on the account, and checks the limit against its balance", async () => {
    const { db, another, all, close } = await dialect.open();
    const other = await another();
    if (other.dialect !== "postgres") throw new Error("postgres only");
    const team = await createTeam(db, "acme");
    await credit(db, team.id, MAX_BALANCE_MICROS - 500, null);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const held = new Promise<void>((resolve) => (locked = resolve));
    // Another replica's credit of 400 in flight: it holds the account row, and adds once this credit is waiting.
    const tx = other.pg.$client.begin(async (t) => {
      await t`SELECT 1 FROM billing_accounts WHERE team_id = ${team.id} FOR UPDATE`;
      locked();
      await released;
      await t`UPDATE billing_accounts SET balance_micros = balance_micros + 400 WHERE team_id = ${team.id}`;
    });
    await held;
    // Read without waiting, the balance would still be 500 below the limit and this credit would pass it.
    const crediting = credit(db, team.id, 200, null).catch((e: Error) => e);
    await waitFor(async () => (await all<{ n: number }>(sql`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`))[0]!.n, {
      what: "the credit to wait on the account row",
      until: (n) => n >= 1,
    });
    release();
    await tx;
    expect(await crediting).toBeInstanceOf(BalanceLimitError);
    expect((await findAccount(db, team.id))!.balanceMicros).toBe(MAX_BALANCE_MICROS - 100);
    await close();
  });
});
