// Stored responses, their items, events and reasoning index, and a team's list of them: on every dialect.
import { describe, expect, test } from "bun:test";
import { createKey, revokeKey } from "../../../src/db/keys-repo.ts";
import { appendEvent, endResponse, eventsAfter, lastSequence, reasoningOrigins, updateResponse, writeStream } from "../../../src/db/response-events-repo.ts";
import { countTeamResponses, deleteResponse, findResponse, findResponseWithKey, insertResponse, listTeamResponses, markFailed, pageInputItems, sweepExpired, unfinishedResponses } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const db = t.db;
  const team = await createTeam(db, "a");
  const other = await createTeam(db, "b");
  const key = await createKey(db, team.id, "k");
  const add = async (id: string, o: { status?: string; background?: boolean; expiresAt?: number; items?: number; reasoning?: string[] } = {}) =>
    await insertResponse(
      db,
      {
        id, teamId: team.id, keyId: key.id, model: "m", status: o.status ?? "completed", background: o.background ?? false, requestJson: "{}",
        responseJson: "{}", createdAt: 100, updatedAt: 100, expiresAt: o.expiresAt ?? 10_000_000_000,
      },
      Array.from({ length: o.items ?? 0 }, (_, i) => ({ itemId: `msg_${i}`, item: { n: i } })),
      o.reasoning,
    );
  return { ...t, team, other, add };
}

describe.each(DIALECTS)("stored responses ($name)", (dialect) => {
  test("reads and deletes are scoped to the owning team", async () => {
    const { db, team, other, add } = await setup(dialect);
    await add("resp_1");
    expect(await findResponse(db, "resp_1", other.id)).toBeUndefined();
    expect(await deleteResponse(db, "resp_1", other.id)).toBe(false);
    expect((await findResponse(db, "resp_1", team.id))?.id).toBe("resp_1");
    expect(await deleteResponse(db, "resp_1", team.id)).toBe(true);
    expect(await findResponse(db, "resp_1", team.id)).toBeUndefined();
  });

  test("input items page in both orders after a cursor, with has_more; an unknown cursor is null", async () => {
    const { db, add } = await setup(dialect);
    await add("resp_1", { items: 5 });
    const ns = (p: Awaited<ReturnType<typeof pageInputItems>>) => p!.items.map((i) => i.item.n);
    expect(ns(await pageInputItems(db, "resp_1", { order: "desc", after: null, limit: 2 }))).toEqual([4, 3]);
    expect((await pageInputItems(db, "resp_1", { order: "desc", after: null, limit: 2 }))!.hasMore).toBe(true);
    expect(ns(await pageInputItems(db, "resp_1", { order: "desc", after: "msg_3", limit: 5 }))).toEqual([2, 1, 0]);
    expect((await pageInputItems(db, "resp_1", { order: "desc", after: "msg_3", limit: 5 }))!.hasMore).toBe(false);
    expect(ns(await pageInputItems(db, "resp_1", { order: "asc", after: "msg_1", limit: 2 }))).toEqual([2, 3]);
    expect(await pageInputItems(db, "resp_1", { order: "asc", after: "msg_9", limit: 2 })).toBeNull();
  });

  test("events replay after a sequence number; a number is stored once", async () => {
    const { db, add } = await setup(dialect);
    await add("resp_1");
    for (let i = 0; i < 4; i++) await appendEvent(db, "resp_1", i, `{"n":${i}}`);
    await expect(appendEvent(db, "resp_1", 2, "{}")).rejects.toThrow(dialect.duplicate("response_events", "response_id"));
    expect((await eventsAfter(db, "resp_1", 1)).map((e) => e.sequence)).toEqual([2, 3]);
    expect(await lastSequence(db, "resp_1")).toBe(3);
    expect(await lastSequence(db, "resp_none")).toBe(-1);
  });

  test("expiry: an expired response reads as gone, and the sweep deletes it with its items and events", async () => {
    const { db, team, add, count } = await setup(dialect);
    await add("resp_old", { expiresAt: 1000, items: 3 });
    await add("resp_new", { items: 1 });
    await appendEvent(db, "resp_old", 0, "{}");
    expect((await findResponse(db, "resp_old", team.id, 999))?.id).toBe("resp_old");
    expect(await findResponse(db, "resp_old", team.id, 1000)).toBeUndefined();
    expect(await sweepExpired(db, 1000)).toBe(1);
    expect(await count("response_input_items")).toBe(1);
    expect(await count("response_events")).toBe(0);
    expect((await findResponse(db, "resp_new", team.id))?.id).toBe("resp_new");
  });

  test("the sweep deletes a batch at a time", async () => {
    const { db, add } = await setup(dialect);
    for (let i = 0; i < 5; i++) await add(`resp_${i}`, { expiresAt: 1000 });
    expect(await sweepExpired(db, 2000, 2)).toBe(2);
    expect(await sweepExpired(db, 2000, 2)).toBe(2);
    expect(await sweepExpired(db, 2000, 2)).toBe(1);
    expect(await sweepExpired(db, 2000, 2)).toBe(0);
  });

  test("unfinished responses (background or streamed) are found for recovery", async () => {
    const { db, add } = await setup(dialect);
    await add("resp_q", { status: "queued", background: true });
    await add("resp_r", { status: "in_progress", background: true });
    await add("resp_done", { status: "completed", background: true });
    await add("resp_stream", { status: "in_progress" });
    expect((await unfinishedResponses(db)).map((r) => r.id).sort()).toEqual(["resp_q", "resp_r", "resp_stream"]);
  });

  test("reasoning items are found by id for the owning team's live responses only, and go with their response", async () => {
    const { db, team, other, add } = await setup(dialect);
    await add("resp_1", { reasoning: ["rs_a"] });
    await add("resp_old", { reasoning: ["rs_old"], expiresAt: 50 });
    await updateResponse(db, "resp_1", { status: "completed", responseJson: "{}" }, ["rs_a", "rs_b"]);
    const found = async (teamId: number) => (await reasoningOrigins(db, teamId, ["rs_a", "rs_b", "rs_old", "rs_none"], 100)).map((o) => [o.itemId, o.responseId, o.model]);
    expect((await found(team.id)).sort()).toEqual([["rs_a", "resp_1", "m"], ["rs_b", "resp_1", "m"]]);
    expect(await found(other.id)).toEqual([]);
    await deleteResponse(db, "resp_1", team.id, 100);
    expect(await found(team.id)).toEqual([]);
  });

  test("a stream's writes land in one transaction, in order: a failing one leaves none of its batch", async () => {
    const { db, team, add, failInserts } = await setup(dialect);
    await add("resp_1", { status: "in_progress" });
    const event = (sequence: number) => ({ kind: "event" as const, responseId: "resp_1", sequence, json: `{"n":${sequence}}` });
    const row = { kind: "row" as const, responseId: "resp_1", set: { status: "completed", responseJson: '{"done":true}', storedBytes: 42 }, reasoningIds: ["rs_1"] };
    await writeStream(db, [event(0), event(1), row]);
    expect((await eventsAfter(db, "resp_1", -1)).map((e) => e.json)).toEqual(['{"n":0}', '{"n":1}']);
    expect(await findResponse(db, "resp_1", team.id)).toMatchObject({ status: "completed", responseJson: '{"done":true}', storedBytes: 42 });
    expect((await reasoningOrigins(db, team.id, ["rs_1"])).map((o) => o.responseId)).toEqual(["resp_1"]);
    // A sequence number stored already fails the whole batch: the row update before it is undone.
    await expect(writeStream(db, [{ ...row, set: { status: "failed", responseJson: "{}" } }, event(1)])).rejects.toThrow(dialect.duplicate("response_events", "response_id"));
    expect((await findResponse(db, "resp_1", team.id))?.status).toBe("completed");
    const restore = await failInserts("response_events");
    await expect(writeStream(db, [event(2)])).rejects.toThrow("database or disk is full");
    await restore();
    expect(await lastSequence(db, "resp_1")).toBe(1);
  });

  test("ending a response numbers its closing event after the last stored one, with the row, in one transaction", async () => {
    const { db, team, add, failInserts } = await setup(dialect);
    await add("resp_1", { status: "in_progress", background: true });
    await appendEvent(db, "resp_1", 0, "{}");
    await appendEvent(db, "resp_1", 1, "{}");
    const end = (sequence: number) => ({ eventJson: JSON.stringify({ type: "response.failed", sequence_number: sequence }), set: { status: "failed", responseJson: `{"at":${sequence}}` } });
    const restore = await failInserts("response_events");
    await expect(endResponse(db, "resp_1", end)).rejects.toThrow("database or disk is full");
    expect((await findResponse(db, "resp_1", team.id))?.status).toBe("in_progress");
    await restore();
    await endResponse(db, "resp_1", end);
    expect((await eventsAfter(db, "resp_1", 1)).map((e) => JSON.parse(e.json))).toEqual([{ type: "response.failed", sequence_number: 2 }]);
    expect(await findResponse(db, "resp_1", team.id)).toMatchObject({ status: "failed", responseJson: '{"at":2}' });
    await add("resp_2", { status: "queued", background: true });
    await markFailed(db, "resp_2");
    expect(await findResponse(db, "resp_2", team.id)).toMatchObject({ status: "failed", responseJson: "{}" });
  });
});

describe.each(DIALECTS)("a team's list of responses, the dashboard's ($name)", (dialect) => {
  async function listed() {
    const { db } = await dialect.open();
    const team = await createTeam(db, "a");
    const other = await createTeam(db, "b");
    const key = await createKey(db, team.id, "ci");
    const otherKey = await createKey(db, other.id, "theirs");
    const add = async (id: string, createdAt: number, o: { status?: string; background?: boolean; expiresAt?: number; teamId?: number; keyId?: number } = {}) =>
      await insertResponse(
        db,
        {
          id, teamId: o.teamId ?? team.id, keyId: o.keyId ?? key.id, model: "m", status: o.status ?? "completed", background: o.background ?? false,
          requestJson: "{}", responseJson: "{}", createdAt, updatedAt: createdAt + 1, expiresAt: o.expiresAt ?? 10_000_000_000,
        },
        [],
      );
    return { db, team, other, key, otherKey, add };
  }

  test("newest first, ties by id, only the team's unexpired ones, with the key's name and last four characters", async () => {
    const { db, team, other, key, otherKey, add } = await listed();
    await add("resp_a", 10);
    await add("resp_c", 20);
    await add("resp_b", 20, { status: "failed", background: true });
    await add("resp_old", 30, { expiresAt: 50 });
    await add("resp_theirs", 40, { teamId: other.id, keyId: otherKey.id });
    const page = await listTeamResponses(db, team.id, { limit: 10 }, 100);
    expect(page.rows.map((r) => r.id)).toEqual(["resp_c", "resp_b", "resp_a"]);
    expect(page.hasMore).toBe(false);
    expect(page.rows[1]).toEqual({ id: "resp_b", model: "m", status: "failed", background: true, createdAt: 20, updatedAt: 21, key: { id: key.id, name: "ci", hint: key.key.slice(-4), revoked: false } });
    await revokeKey(db, key.id);
    expect((await listTeamResponses(db, team.id, { limit: 1 }, 100)).rows[0]!.key.revoked).toBe(true);
    expect((await listTeamResponses(db, other.id, { limit: 10 }, 100)).rows.map((r) => r.id)).toEqual(["resp_theirs"]);
  });

  test("keyset pages after a cursor cover every response once, across equal creation times", async () => {
    const { db, team, add } = await listed();
    for (let i = 0; i < 7; i++) await add(`resp_${i}`, 100 + Math.floor(i / 3));
    const seen: string[] = [];
    let before = null;
    for (;;) {
      const page = await listTeamResponses(db, team.id, { limit: 2, before }, 200);
      seen.push(...page.rows.map((r) => r.id));
      if (!page.hasMore) break;
      const last = page.rows.at(-1)!;
      before = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).toEqual(["resp_6", "resp_5", "resp_4", "resp_3", "resp_2", "resp_1", "resp_0"]);
  });

  test("filters by status and by background, and counts by status", async () => {
    const { db, team, add } = await listed();
    await add("resp_q", 1, { status: "queued", background: true });
    await add("resp_f", 2, { status: "failed", background: true });
    await add("resp_f2", 3, { status: "failed" });
    await add("resp_gone", 4, { status: "failed", expiresAt: 5 });
    expect((await listTeamResponses(db, team.id, { limit: 10, status: "failed" }, 10)).rows.map((r) => r.id)).toEqual(["resp_f2", "resp_f"]);
    expect((await listTeamResponses(db, team.id, { limit: 10, backgroundOnly: true }, 10)).rows.map((r) => r.id)).toEqual(["resp_f", "resp_q"]);
    expect((await listTeamResponses(db, team.id, { limit: 10, status: "failed", backgroundOnly: true }, 10)).rows.map((r) => r.id)).toEqual(["resp_f"]);
    expect(await countTeamResponses(db, team.id, 10)).toEqual({ queued: 1, failed: 2 });
  });

  test("one response with its key, for its own team only", async () => {
    const { db, team, other, key, add } = await listed();
    await add("resp_1", 1);
    expect(await findResponseWithKey(db, "resp_1", team.id)).toMatchObject({ row: { id: "resp_1" }, key: { id: key.id, name: "ci", revoked: false } });
    expect(await findResponseWithKey(db, "resp_1", other.id)).toBeUndefined();
  });
});
