// A stored response's writes made under a lease (owner and epoch): refused once another replica has claimed it, and a
// response is ended (its closing event) once only.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createKey } from "../../../src/db/keys-repo.ts";
import { endResponse, LeaseLost, writeStream } from "../../../src/db/response-events-repo.ts";
import { claimExpiredLeases } from "../../../src/db/response-leases-repo.ts";
import { insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const team = await createTeam(t.db, "a");
  const key = await createKey(t.db, team.id, "k");
  const add = (id: string, o: { status?: string; owner: string; until: number }) =>
    insertResponse(t.db, {
      id, teamId: team.id, keyId: key.id, model: "m", status: o.status ?? "in_progress", background: true, requestJson: "{}", responseJson: "{}",
      createdAt: 100, updatedAt: 100, expiresAt: 10_000_000_000, leaseOwner: o.owner, leaseUntil: o.until,
    }, []);
  const events = async (id: string) =>
    (await t.all<{ sequence: number; json: string }>(sql`SELECT sequence, event_json AS json FROM response_events WHERE response_id = ${id} ORDER BY sequence`)).map((e) => [Number(e.sequence), e.json]);
  const status = async (id: string) => (await t.all<{ status: string }>(sql`SELECT status FROM responses WHERE id = ${id}`))[0]!.status;
  return { ...t, add, events, status };
}

const ending = (type: string) => (sequence: number) => ({ eventJson: JSON.stringify({ type, sequence_number: sequence }), set: { status: "failed", responseJson: "{}" } });

describe.each(DIALECTS)("ending a stored response ($name)", (dialect) => {
  test("a response already ended gets no second closing event", async () => {
    const { db, add, events, status, close } = await setup(dialect);
    await add("resp_a", { owner: "r1", until: 1000 });
    expect(await endResponse(db, "resp_a", ending("response.failed"))).toBe(true);
    expect(await endResponse(db, "resp_a", ending("response.incomplete"))).toBe(false);
    expect(await events("resp_a")).toEqual([[0, JSON.stringify({ type: "response.failed", sequence_number: 0 })]]);
    expect(await status("resp_a")).toBe("failed");
    await close();
  });
});

describe("fenced writes (postgres)", () => {
  const pg = DIALECTS.find((d) => d.name === "postgres")!;
  const event = (id: string, sequence: number, fence: { owner: string; epoch: number }) => ({ kind: "event" as const, responseId: id, sequence, json: `{"n":${sequence}}`, fence });
  const row = (id: string, status: string, fence: { owner: string; epoch: number }) => ({ kind: "row" as const, responseId: id, set: { status, responseJson: "{}" }, reasoningIds: [], fence });

  test("writes under the lease land; once another replica claimed the response they are refused, the whole batch with them", async () => {
    const { db, add, events, status, close } = await setup(pg);
    await add("resp_a", { owner: "r1", until: 1000 });
    await add("resp_b", { owner: "r1", until: Date.now() + 600_000 });
    const mine = { owner: "r1", epoch: 0 };
    await writeStream(db, [event("resp_a", 0, mine), row("resp_a", "in_progress", mine)]);
    expect(await events("resp_a")).toEqual([[0, '{"n":0}']]);
    // r1 was paused past its lease: r2 takes resp_a over (epoch 1); resp_b's lease still holds.
    expect((await claimExpiredLeases(db, "r2", { leaseMs: 5000, limit: 10 })).map((r) => [r.id, r.leaseEpoch])).toEqual([["resp_a", 1]]);
    const refused = await writeStream(db, [event("resp_b", 0, mine), event("resp_a", 1, mine), row("resp_a", "completed", mine)]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LeaseLost);
    expect((refused as LeaseLost).responseIds).toEqual(["resp_a"]);
    expect(await events("resp_a")).toEqual([[0, '{"n":0}']]);
    expect(await events("resp_b")).toEqual([]);
    expect(await status("resp_a")).toBe("in_progress");
    // The new runner's writes land; so do the old runner's for the response it still holds.
    await writeStream(db, [event("resp_a", 1, { owner: "r2", epoch: 1 }), event("resp_b", 0, mine)]);
    expect((await events("resp_a")).length).toBe(2);
    expect((await events("resp_b")).length).toBe(1);
    // Ending it under the old claim is refused too; under the new one it ends.
    expect(await endResponse(db, "resp_a", ending("response.failed"), mine).catch((e: unknown) => e)).toBeInstanceOf(LeaseLost);
    expect(await endResponse(db, "resp_a", ending("response.failed"), { owner: "r2", epoch: 1 })).toBe(true);
    expect(await status("resp_a")).toBe("failed");
    await close();
  });
});
