// The dashboard's Batches tab through app.handle: a team's batches newest first with their statuses, how many lines
// ended (and failed), and the cost of the usage rows that name each batch; 25 a page; never another team's.
import { beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "../../../src/db/keys-repo.ts";
import type { Db } from "../../../src/db/client.ts";
import { claimLines, endLine, insertBatch, moveBatch, startBatch } from "../../../src/db/batches-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { batchProgress, batchTone } from "../../../src/dashboard/tabs/batches-view.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln, type TestKiln } from "../../helpers/kiln.ts";

const NOW = Math.floor(Date.now() / 1000);
let k: TestKiln;
let db: Db;
let teamA: number;
let teamB: number;
let member: DashboardClient;
let stranger: DashboardClient;
let operator: DashboardClient;
/** Team A's batches as the page must show them, newest first: [id, status, finished, total, failed, cost]. */
const expected: [string, string, number, number, number, number][] = [];

async function client(username: string, role: "operator" | "member", teamId: number | null): Promise<DashboardClient> {
  const password = await addUser(db, username, role, teamId);
  const c = new DashboardClient((r) => k.handle(r));
  expect((await c.signIn(username, password)).status).toBe(303);
  return c;
}

const hex = (i: number) => i.toString(16).padStart(32, "0");

/** A batch of `total` lines, `done` of them done and `failed` failed, each ended line billed `perLine` micro-units. */
async function addBatch(teamId: number, keyId: number, i: number, o: { total: number; done: number; failed: number; perLine: number; status?: string }): Promise<string> {
  const id = `batch_${hex(i)}`;
  await insertBatch(db, { id, teamId, keyId, endpoint: "/v1/chat/completions", inputFileId: "file-in", completionWindow: "24h", status: "validating", createdAt: NOW - 1000 + i, expiresAt: NOW + 86_400, leaseOwner: "r1", leaseEpoch: 1 }, 60_000);
  await startBatch(db, id, Array.from({ length: o.total }, (_, n) => ({ line: n + 1, customId: `c${n}`, bodyJson: "{}" })), NOW);
  const claimed = await claimLines(db, id, o.done + o.failed);
  for (const [n, l] of claimed.entries()) {
    await endLine(db, id, l.line, n < o.done ? "done" : "failed", "{}");
    await recordSettlement(db, {
      requestId: `req_${id}_${l.line}`, teamId, keyId, model: "m", endpoint: "chat", status: n < o.done ? "completed" : "failed",
      inputTokens: 5, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: o.perLine, serviceTier: "batch", batchId: id,
    });
  }
  if (o.status) await moveBatch(db, id, ["in_progress"], { status: o.status });
  return id;
}

const listed = (text: string) => {
  const table = /<table class="table" id="batches-table">([\s\S]*?)<\/table>/.exec(text)?.[1] ?? "";
  return [...table.matchAll(/<tr data-id="([^"]+)">[\s\S]*?data-status="([^"]+)"[\s\S]*?data-progress="(\d+)\/(\d+)"[\s\S]*?data-cost="(\d+)"/g)].map((m) => [m[1]!, m[2]!, Number(m[3]), Number(m[4]), Number(m[5])]);
};

beforeAll(async () => {
  k = await testKiln();
  db = k.deps.db;
  teamA = k.teamId;
  teamB = (await createTeam(db, "team-b")).id;
  const keyB = await createKey(db, teamB, "b key");
  for (let i = 0; i < 27; i++) {
    const o = { total: 10 + i, done: i % 7, failed: i % 3, perLine: 1000 + i, status: i % 5 === 0 ? "cancelling" : undefined };
    const id = await addBatch(teamA, k.keyId, i, o);
    expected.unshift([id, o.status ?? "in_progress", o.done + o.failed, o.total, o.failed, (o.done + o.failed) * o.perLine]);
  }
  await addBatch(teamB, keyB.id, 100, { total: 4, done: 4, failed: 0, perLine: 7 });
  member = await client("alice", "member", teamA);
  stranger = await client("bob", "member", teamB);
  operator = await client("olga", "operator", null);
});

describe("the Batches tab", () => {
  test("lists the team's batches newest first with status, lines ended and cost, 25 a page, then the rest", async () => {
    const first = await member.get(`/dashboard/teams/${teamA}/batches`);
    expect(first.status).toBe(200);
    expect(first.text).toContain('aria-current="page">Batches</a>');
    expect(listed(first.text)).toEqual(expected.slice(0, 25).map(([id, status, finished, total, , cost]) => [id, status, finished, total, cost]));
    expect(first.text).not.toContain(`batch_${hex(100)}`);
    // A row with failed lines says how many.
    const withFailures = expected.find((e) => e[4] > 0)!;
    expect(first.text).toMatch(new RegExp(`data-id="${withFailures[0]}"[\\s\\S]*?\\(${withFailures[4]} failed\\)`));
    expect(first.text).not.toMatch(/ style=|<style/i);
    const older = /id="older" rel="next" href="([^"]+)"/.exec(first.text)?.[1];
    expect(older).toBe(`/dashboard/teams/${teamA}/batches?after=${expected[24]![0]}`);
    const second = await member.get(older!);
    expect(listed(second.text).map((r) => r[0])).toEqual(expected.slice(25).map((e) => e[0]));
    expect(second.text).not.toContain('id="older"');
  });

  test("another team's member gets 404; the operator sees any team's; a stale cursor is a 404", async () => {
    expect((await stranger.get(`/dashboard/teams/${teamA}/batches`)).status).toBe(404);
    const own = await stranger.get(`/dashboard/teams/${teamB}/batches`);
    expect(listed(own.text)).toEqual([[`batch_${hex(100)}`, "in_progress", 4, 4, 28]]);
    expect(listed((await operator.get(`/dashboard/teams/${teamA}/batches`)).text)).toHaveLength(25);
    expect((await member.get(`/dashboard/teams/${teamA}/batches?after=batch_${hex(100)}`)).status).toBe(404);
    expect((await member.get(`/dashboard/teams/${teamA}/batches?after=nope`)).status).toBe(404);
  });

  test("a team without batches is told how to start one", async () => {
    const empty = (await createTeam(db, "team-empty")).id;
    const page = await operator.get(`/dashboard/teams/${empty}/batches`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="batches-empty"');
  });
});

describe("the tab's pure parts", () => {
  test("progress counts done and failed lines against the total; a batch still validating is at 0%", () => {
    expect(batchProgress(200, { done: 150, failed: 3 })).toEqual({ finished: 153, total: 200, percent: 76 });
    expect(batchProgress(0, { done: 0, failed: 0 })).toEqual({ finished: 0, total: 0, percent: 0 });
  });

  test("tones: completed good, expired/cancelled warn, failed bad, running none", () => {
    expect(["completed", "expired", "cancelled", "failed", "in_progress", "validating"].map(batchTone)).toEqual(["good", "warn", "warn", "bad", null, null]);
  });
});
