import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../../src/db/client.ts";
import { applyMigrations } from "../../../src/db/migrate.ts";
import { migrations } from "../../../src/db/migrations.gen.ts";
import { createKey, revokeKey } from "../../../src/db/keys-repo.ts";
import {
  appendEvent, countTeamResponses, deleteResponse, eventsAfter, findResponse, findResponseWithKey, insertResponse, lastSequence, listTeamResponses, pageInputItems,
  reasoningOrigins, sweepExpired, unfinishedResponses, updateResponse,
} from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "a");
  const other = await createTeam(db, "b");
  const key = await createKey(db, team.id, "k");
  const add = (id: string, o: { status?: string; background?: boolean; expiresAt?: number; items?: number; reasoning?: string[] } = {}) =>
    insertResponse(
      db,
      {
        id, teamId: team.id, keyId: key.id, model: "m", status: o.status ?? "completed", background: o.background ?? false, requestJson: "{}",
        responseJson: "{}", createdAt: 100, updatedAt: 100, expiresAt: o.expiresAt ?? 10_000_000_000,
      },
      Array.from({ length: o.items ?? 0 }, (_, i) => ({ itemId: `msg_${i}`, item: { n: i } })),
      o.reasoning,
    );
  return { db, team, other, add };
}

describe("stored responses", () => {
  test("reads and deletes are scoped to the owning team", async () => {
    const { db, team, other, add } = await setup();
    add("resp_1");
    expect(findResponse(db, "resp_1", other.id)).toBeUndefined();
    expect(deleteResponse(db, "resp_1", other.id)).toBe(false);
    expect(findResponse(db, "resp_1", team.id)?.id).toBe("resp_1");
    expect(deleteResponse(db, "resp_1", team.id)).toBe(true);
    expect(findResponse(db, "resp_1", team.id)).toBeUndefined();
  });

  test("input items page in both orders after a cursor, with has_more; an unknown cursor is null", async () => {
    const { db, add } = await setup();
    add("resp_1", { items: 5 });
    const ns = (p: ReturnType<typeof pageInputItems>) => p!.items.map((i) => i.item.n);
    expect(ns(pageInputItems(db, "resp_1", { order: "desc", after: null, limit: 2 }))).toEqual([4, 3]);
    expect(pageInputItems(db, "resp_1", { order: "desc", after: null, limit: 2 })!.hasMore).toBe(true);
    expect(ns(pageInputItems(db, "resp_1", { order: "desc", after: "msg_3", limit: 5 }))).toEqual([2, 1, 0]);
    expect(pageInputItems(db, "resp_1", { order: "desc", after: "msg_3", limit: 5 })!.hasMore).toBe(false);
    expect(ns(pageInputItems(db, "resp_1", { order: "asc", after: "msg_1", limit: 2 }))).toEqual([2, 3]);
    expect(pageInputItems(db, "resp_1", { order: "asc", after: "msg_9", limit: 2 })).toBeNull();
  });

  test("events replay after a sequence number; a number is stored once", async () => {
    const { db, add } = await setup();
    add("resp_1");
    for (let i = 0; i < 4; i++) appendEvent(db, "resp_1", i, `{"n":${i}}`);
    expect(() => appendEvent(db, "resp_1", 2, "{}")).toThrow();
    expect(eventsAfter(db, "resp_1", 1).map((e) => e.sequence)).toEqual([2, 3]);
    expect(lastSequence(db, "resp_1")).toBe(3);
    expect(lastSequence(db, "resp_none")).toBe(-1);
  });

  test("expiry: an expired response reads as gone, and the sweep deletes it with its items and events", async () => {
    const { db, team, add } = await setup();
    add("resp_old", { expiresAt: 1000, items: 3 });
    add("resp_new", { items: 1 });
    appendEvent(db, "resp_old", 0, "{}");
    expect(findResponse(db, "resp_old", team.id, 999)?.id).toBe("resp_old");
    expect(findResponse(db, "resp_old", team.id, 1000)).toBeUndefined();
    expect(sweepExpired(db, 1000)).toBe(1);
    const count = (table: string) => (db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(count("response_input_items")).toBe(1);
    expect(count("response_events")).toBe(0);
    expect(findResponse(db, "resp_new", team.id)?.id).toBe("resp_new");
  });

  test("the sweep deletes a batch at a time", async () => {
    const { db, add } = await setup();
    for (let i = 0; i < 5; i++) add(`resp_${i}`, { expiresAt: 1000 });
    expect(sweepExpired(db, 2000, 2)).toBe(2);
    expect(sweepExpired(db, 2000, 2)).toBe(2);
    expect(sweepExpired(db, 2000, 2)).toBe(1);
    expect(sweepExpired(db, 2000, 2)).toBe(0);
  });

  test("unfinished responses (background or streamed) are found for recovery", async () => {
    const { db, add } = await setup();
    add("resp_q", { status: "queued", background: true });
    add("resp_r", { status: "in_progress", background: true });
    add("resp_done", { status: "completed", background: true });
    add("resp_stream", { status: "in_progress" });
    expect(unfinishedResponses(db).map((r) => r.id).sort()).toEqual(["resp_q", "resp_r", "resp_stream"]);
  });

  test("reasoning items are found by id for the owning team's live responses only, and go with their response", async () => {
    const { db, team, other, add } = await setup();
    add("resp_1", { reasoning: ["rs_a"] });
    add("resp_old", { reasoning: ["rs_old"], expiresAt: 50 });
    updateResponse(db, "resp_1", { status: "completed", responseJson: "{}" }, ["rs_a", "rs_b"]);
    const found = (teamId: number) => reasoningOrigins(db, teamId, ["rs_a", "rs_b", "rs_old", "rs_none"], 100).map((o) => [o.itemId, o.responseId, o.model]);
    expect(found(team.id).sort()).toEqual([["rs_a", "resp_1", "m"], ["rs_b", "resp_1", "m"]]);
    expect(found(other.id)).toEqual([]);
    deleteResponse(db, "resp_1", team.id, 100);
    expect(found(team.id)).toEqual([]);
  });

  test("the migration that adds the reasoning index fills it from the responses stored before it", () => {
    const sqlite = new Database(join(tempDir(), "kiln.db"), { create: true, strict: true });
    const at = migrations.findIndex((m) => m.tag === "0004_reasoning_items");
    applyMigrations(sqlite, migrations.slice(0, at));
    sqlite.run("insert into teams (id, name) values (1, 't'); insert into api_keys (id, team_id, name, secret_hash, hint) values (1, 1, 'k', 'h', 'hint')");
    const row = sqlite.query("insert into responses (id, team_id, key_id, model, status, request_json, response_json, created_at, updated_at, expires_at) values (?, 1, 1, 'm', 'completed', '{}', ?, 1, 1, 9999999999)");
    row.run("resp_1", JSON.stringify({ output: [{ id: "rs_1", type: "reasoning", summary: [] }, { id: "msg_1", type: "message" }, { id: "rs_2", type: "reasoning", summary: [] }] }));
    row.run("resp_broken", "{not json");
    applyMigrations(sqlite, migrations);
    expect(sqlite.query("select item_id, response_id from response_reasoning_items order by item_id").all()).toEqual([
      { item_id: "rs_1", response_id: "resp_1" },
      { item_id: "rs_2", response_id: "resp_1" },
    ]);
    sqlite.close();
  });
});

describe("a team's list of responses (the dashboard)", () => {
  async function listed() {
    const db = await openDatabase(tempDir());
    const team = await createTeam(db, "a");
    const other = await createTeam(db, "b");
    const key = await createKey(db, team.id, "ci");
    const otherKey = await createKey(db, other.id, "theirs");
    const add = (id: string, createdAt: number, o: { status?: string; background?: boolean; expiresAt?: number; teamId?: number; keyId?: number } = {}) =>
      insertResponse(
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
    add("resp_a", 10);
    add("resp_c", 20);
    add("resp_b", 20, { status: "failed", background: true });
    add("resp_old", 30, { expiresAt: 50 });
    add("resp_theirs", 40, { teamId: other.id, keyId: otherKey.id });
    const page = listTeamResponses(db, team.id, { limit: 10 }, 100);
    expect(page.rows.map((r) => r.id)).toEqual(["resp_c", "resp_b", "resp_a"]);
    expect(page.hasMore).toBe(false);
    expect(page.rows[1]).toEqual({ id: "resp_b", model: "m", status: "failed", background: true, createdAt: 20, updatedAt: 21, key: { id: key.id, name: "ci", hint: key.key.slice(-4), revoked: false } });
    await revokeKey(db, key.id);
    expect(listTeamResponses(db, team.id, { limit: 1 }, 100).rows[0]!.key.revoked).toBe(true);
    expect(listTeamResponses(db, other.id, { limit: 10 }, 100).rows.map((r) => r.id)).toEqual(["resp_theirs"]);
  });

  test("keyset pages after a cursor cover every response once, across equal creation times", async () => {
    const { db, team, add } = await listed();
    for (let i = 0; i < 7; i++) add(`resp_${i}`, 100 + Math.floor(i / 3));
    const seen: string[] = [];
    let before = null;
    for (;;) {
      const page = listTeamResponses(db, team.id, { limit: 2, before }, 200);
      seen.push(...page.rows.map((r) => r.id));
      if (!page.hasMore) break;
      const last = page.rows.at(-1)!;
      before = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).toEqual(["resp_6", "resp_5", "resp_4", "resp_3", "resp_2", "resp_1", "resp_0"]);
  });

  test("filters by status and by background, and counts by status", async () => {
    const { db, team, add } = await listed();
    add("resp_q", 1, { status: "queued", background: true });
    add("resp_f", 2, { status: "failed", background: true });
    add("resp_f2", 3, { status: "failed" });
    add("resp_gone", 4, { status: "failed", expiresAt: 5 });
    expect(listTeamResponses(db, team.id, { limit: 10, status: "failed" }, 10).rows.map((r) => r.id)).toEqual(["resp_f2", "resp_f"]);
    expect(listTeamResponses(db, team.id, { limit: 10, backgroundOnly: true }, 10).rows.map((r) => r.id)).toEqual(["resp_f", "resp_q"]);
    expect(listTeamResponses(db, team.id, { limit: 10, status: "failed", backgroundOnly: true }, 10).rows.map((r) => r.id)).toEqual(["resp_f"]);
    expect(countTeamResponses(db, team.id, 10)).toEqual({ queued: 1, failed: 2 });
  });

  test("one response with its key, for its own team only", async () => {
    const { db, team, other, key, add } = await listed();
    add("resp_1", 1);
    expect(findResponseWithKey(db, "resp_1", team.id)).toMatchObject({ row: { id: "resp_1" }, key: { id: key.id, name: "ci", revoked: false } });
    expect(findResponseWithKey(db, "resp_1", other.id)).toBeUndefined();
  });
});
