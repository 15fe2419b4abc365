// The dashboard's Responses tab through app.handle: the list against the database's rows (team scoping, statuses,
// paging, filters), the page of one response, and cancel: the API's cancel run from a form, refused where the API
// refuses, never for another team, never without the form's CSRF token. A real queued job is cancelled on a real kiln.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findActiveKeyWithTeam, createKey } from "../../../src/db/keys-repo.ts";
import type { Db } from "../../../src/db/client.ts";
import { findResponse, insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { parseKey } from "../../../src/auth/api-key.ts";
import { MAX_SHOWN_CHARS } from "../../../src/dashboard/tabs/response-summary.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln, type TestKiln } from "../../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const NOW = Math.floor(Date.now() / 1000);

interface RowSpec {
  id: string;
  teamId: number;
  keyId: number;
  status: string;
  background?: boolean;
  createdAt?: number;
  expiresAt?: number;
  /** The response object's extra fields (output, usage, error). */
  response?: Record<string, unknown>;
}

/** A stored response row as a create leaves it (no live job behind it). */
async function addRow(db: Db, r: RowSpec): Promise<void> {
  const createdAt = r.createdAt ?? NOW - 60;
  const response = { id: r.id, object: "response", created_at: createdAt, status: r.status, completed_at: null, error: null, incomplete_details: null, model: "kiln-test", output: [], usage: null, ...r.response };
  await insertResponse(
    db,
    {
      id: r.id, teamId: r.teamId, keyId: r.keyId, model: "kiln-test", status: r.status, background: r.background ?? false,
      requestJson: JSON.stringify({ model: "kiln-test", background: r.background ?? false }), responseJson: JSON.stringify(response),
      createdAt, updatedAt: createdAt, expiresAt: r.expiresAt ?? NOW + 86_400,
    },
    [{ itemId: `msg_in_${r.id}`, item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] } }],
  );
}

/** The rows of the responses table as [id, status], in page order. */
function listedRows(text: string): [string, string][] {
  const table = /<table class="table" id="responses-table">([\s\S]*?)<\/table>/.exec(text)?.[1] ?? "";
  return [...table.matchAll(/<tr data-id="([^"]+)">[\s\S]*?data-status="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]);
}

const olderLink = (text: string) => /id="older" rel="next" href="([^"]+)"/.exec(text)?.[1]?.replaceAll("&amp;", "&") ?? null;
const statusOnPage = (text: string) => /<dd id="response-status"><span class="badge[^"]*" data-status="([^"]+)"/.exec(text)?.[1];
const tile = (text: string, id: string) => new RegExp(`id="${id}"><div class="label">[^<]*</div><div class="value">([^<]+)<`).exec(text)?.[1];

/** The page keeps to the CSP: no inline style and no script but kiln's files (and JSON data blocks). */
function expectNoInlineCode(text: string): void {
  expect(text).not.toMatch(/ style=|<style/i);
  for (const tag of text.match(/<script[^>]*>/gi) ?? []) expect(tag).toMatch(/ src="\/dashboard\/|type="application\/json"/);
}

const STATUSES = ["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"];

let k: TestKiln;
let db: Db;
let teamA: number;
let teamB: number;
let keyB: { id: number; key: string };
let member: DashboardClient;
let stranger: DashboardClient;
let operator: DashboardClient;

async function client(username: string, role: "operator" | "member", teamId: number | null): Promise<DashboardClient> {
  const password = await addUser(db, username, role, teamId);
  const c = new DashboardClient((r) => k.handle(r));
  expect((await c.signIn(username, password)).status).toBe(303);
  return c;
}

beforeAll(async () => {
  k = await testKiln();
  db = k.deps.db;
  teamA = k.teamId;
  teamB = (await createTeam(db, "team-b")).id;
  keyB = await createKey(db, teamB, "b key");
  // Team A: 62 responses, 1 a second, cycling through the statuses; every third one background. One expired.
  for (let i = 0; i < 62; i++) {
    await addRow(db, { id: `resp_a${String(i).padStart(3, "0")}`, teamId: teamA, keyId: k.keyId, status: STATUSES[i % 6]!, background: i % 3 === 0, createdAt: NOW - 1000 + i });
  }
  await addRow(db, { id: "resp_a_expired", teamId: teamA, keyId: k.keyId, status: "completed", createdAt: NOW, expiresAt: NOW - 1 });
  for (let i = 0; i < 3; i++) await addRow(db, { id: `resp_b${i}`, teamId: teamB, keyId: keyB.id, status: "completed", background: true, createdAt: NOW - 10 + i });
  member = await client("alice", "member", teamA);
  stranger = await client("bob", "member", teamB);
  operator = await client("olga", "operator", null);
});

describe("the list", () => {
  test("shows exactly the team's unexpired responses, newest first, with their statuses and key, 50 a page with an Older link", async () => {
    const first = await member.get(`/dashboard/teams/${teamA}/responses`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-security-policy")).toContain("script-src 'self'");
    const expected = sqliteOf(db).$client
      .query("SELECT id, status FROM responses WHERE team_id = ? AND expires_at > ? ORDER BY created_at DESC, id DESC")
      .all(teamA, NOW)
      .map((r) => [(r as { id: string }).id, (r as { status: string }).status]);
    expect(expected).toHaveLength(62);
    const page1 = listedRows(first.text);
    expect(page1).toEqual(expected.slice(0, 50) as [string, string][]);
    expect(first.text).toContain(`test key <code class="hint-code">…${k.key.slice(-4)}</code>`);
    expect(first.text).not.toContain("resp_b");
    expect(first.text).not.toContain("resp_a_expired");
    expectNoInlineCode(first.text);
    // The count tiles agree with the rows.
    expect(tile(first.text, "count-total")).toBe("62");
    expect(tile(first.text, "count-running")).toBe(String(expected.filter(([, s]) => s === "queued" || s === "in_progress").length));
    expect(tile(first.text, "count-failed")).toBe(String(expected.filter(([, s]) => s === "failed").length));

    const older = olderLink(first.text);
    expect(older).toBe(`/dashboard/teams/${teamA}/responses?before=${NOW - 1000 + 12}.resp_a012`);
    const second = await member.get(older!);
    expect(second.status).toBe(200);
    expect(listedRows(second.text)).toEqual(expected.slice(50) as [string, string][]);
    expect(olderLink(second.text)).toBeNull();
    expect(second.text).toContain('id="newest"');
  });

  test("the status filter and the background filter keep only what they name, and paging keeps the filter", async () => {
    const failed = await member.get(`/dashboard/teams/${teamA}/responses?status=failed`);
    const want = sqliteOf(db).$client.query("SELECT id FROM responses WHERE team_id = ? AND status = 'failed' AND expires_at > ? ORDER BY created_at DESC").all(teamA, NOW).map((r) => (r as { id: string }).id);
    expect(listedRows(failed.text)).toEqual(want.map((id) => [id, "failed"]));
    expect(failed.text).toContain('<option value="failed" selected>');

    const background = await member.get(`/dashboard/teams/${teamA}/responses?background=1`);
    const bg = sqliteOf(db).$client.query("SELECT id FROM responses WHERE team_id = ? AND background = 1 AND expires_at > ? ORDER BY created_at DESC").all(teamA, NOW).map((r) => (r as { id: string }).id);
    expect(listedRows(background.text).map(([id]) => id)).toEqual(bg);
    expect(background.text).toMatch(/id="filter-background" checked/);

    const both = await member.get(`/dashboard/teams/${teamA}/responses?status=queued&background=1`);
    expect(listedRows(both.text).every(([id, s]) => s === "queued" && bg.includes(id))).toBe(true);
    expect(listedRows(both.text).length).toBeGreaterThan(0);

    const none = await member.get(`/dashboard/teams/${teamB}/responses?status=failed`, {});
    expect(none.status).toBe(404);
    const empty = await stranger.get(`/dashboard/teams/${teamB}/responses?status=failed`);
    expect(empty.text).toContain('id="responses-empty"');
    expect(empty.text).toContain("match these filters");
  });

  test("an unknown status is a 400 with the problem next to the filter", async () => {
    const res = await member.get(`/dashboard/teams/${teamA}/responses?status=%3Cscript%3E`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('<p class="form-error" id="filter-error" role="alert">&quot;&lt;script&gt;&quot; is not a response status');
    expect(res.text).not.toContain("<script>");
  });

  test("a team without responses gets the empty state", async () => {
    const t = (await createTeam(db, "quiet")).id;
    const res = await operator.get(`/dashboard/teams/${t}/responses`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<p class="empty" id="responses-empty">');
    expect(res.text).toContain("<code>store: true</code>");
    expect(res.text).toContain("<code>background: true</code>");
    expect(res.text).not.toContain('id="responses-table"');
  });

  test("a member of another team gets 404 for the list, a response and its cancel; nothing changes", async () => {
    await addRow(db, { id: "resp_a_guarded", teamId: teamA, keyId: k.keyId, status: "queued", background: true });
    expect((await stranger.get(`/dashboard/teams/${teamA}/responses`)).status).toBe(404);
    expect((await stranger.get(`/dashboard/teams/${teamA}/responses/resp_a_guarded`)).status).toBe(404);
    // Their own team's URL with team A's id: the id is not theirs.
    expect((await stranger.get(`/dashboard/teams/${teamB}/responses/resp_a_guarded`)).status).toBe(404);
    // Each post carries the CSRF token of the stranger's own page, so only the team check can refuse it.
    for (const team of [teamA, teamB]) {
      await stranger.get(`/dashboard/teams/${teamB}/responses`);
      expect((await stranger.post(`/dashboard/teams/${team}/responses/resp_a_guarded/cancel`, {})).status).toBe(404);
    }
    expect((await findResponse(db, "resp_a_guarded", teamA))?.status).toBe("queued");
  });
});

describe("one response", () => {
  test("facts, usage, the output text escaped and the error of a failed one", async () => {
    await addRow(db, {
      id: "resp_a_done", teamId: teamA, keyId: k.keyId, status: "completed",
      response: {
        completed_at: NOW - 30,
        output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello <script>alert(1)</script> & " }, { type: "output_text", text: "bye" }] }, { type: "function_call", name: "lookup" }],
        usage: { input_tokens: 1234, input_tokens_details: { cached_tokens: 0 }, output_tokens: 56, output_tokens_details: { reasoning_tokens: 7 }, total_tokens: 1290 },
      },
    });
    const res = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_done`);
    expect(res.status).toBe(200);
    expect(statusOnPage(res.text)).toBe("completed");
    expect(res.text).toContain('<pre class="output-text" id="output-text">Hello &lt;script&gt;alert(1)&lt;/script&gt; &amp; bye</pre>');
    expect(tile(res.text, "usage-input")).toBe("1,234");
    expect(tile(res.text, "usage-output")).toBe("56");
    expect(tile(res.text, "usage-total")).toBe("1,290");
    expect(res.text).toContain("7 reasoning");
    expect(res.text).toContain("<code>function_call lookup</code>");
    expect(res.text).not.toContain('id="cancel-form"');
    expect(res.text).not.toContain('id="response-error"');
    expectNoInlineCode(res.text);

    await addRow(db, { id: "resp_a_broke", teamId: teamA, keyId: k.keyId, status: "failed", background: true, response: { error: { code: "server_error", message: "The worker <died>" } } });
    const failed = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_broke`);
    expect(failed.text).toMatch(/<section class="card danger-zone" id="response-error">[\s\S]*<code>server_error<\/code> The worker &lt;died&gt;/);
    expect(failed.text).toContain('id="usage-none"');
  });

  test("a long output is cut at the limit and the page says how much there is", async () => {
    const text = "x".repeat(MAX_SHOWN_CHARS + 500);
    await addRow(db, { id: "resp_a_long", teamId: teamA, keyId: k.keyId, status: "completed", response: { output: [{ type: "message", content: [{ type: "output_text", text }] }] } });
    const res = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_long`);
    expect(/id="output-text">(x*)<\/pre>/.exec(res.text)?.[1]?.length).toBe(MAX_SHOWN_CHARS);
    expect(res.text).toContain(`Showing the first 20,000 of 20,500 characters`);
  });

  test("an unknown or expired id is a 404", async () => {
    expect((await member.get(`/dashboard/teams/${teamA}/responses/resp_nothing`)).status).toBe(404);
    expect((await member.get(`/dashboard/teams/${teamA}/responses/resp_a_expired`)).status).toBe(404);
  });
});

describe("cancel", () => {
  test("a queued background response: the form is on its page, and cancelling ends it cancelled on the page and through the API", async () => {
    await addRow(db, { id: "resp_a_wait", teamId: teamA, keyId: k.keyId, status: "queued", background: true });
    const page = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_wait`);
    expect(page.text).toContain(`<form method="post" action="/dashboard/teams/${teamA}/responses/resp_a_wait/cancel" class="row-form" id="cancel-form"`);
    expectNoInlineCode(page.text);
    const res = await member.post(`/dashboard/teams/${teamA}/responses/resp_a_wait/cancel`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/teams/${teamA}/responses/resp_a_wait`);
    const after = await member.get(res.location!);
    expect(after.text).toContain('<p class="notice" role="status">Cancelled response resp_a_wait.</p>');
    expect(statusOnPage(after.text)).toBe("cancelled");
    expect(after.text).not.toContain('id="cancel-form"');
    const api = await k.req("/v1/responses/resp_a_wait");
    expect(((await api.json()) as { status: string }).status).toBe("cancelled");
    expect(k.logs.some((l) => l.msg === "dashboard response cancelled" && l.response_id === "resp_a_wait" && l.by === "alice")).toBe(true);
  });

  test("an operator may cancel a team's background response too", async () => {
    await addRow(db, { id: "resp_a_op", teamId: teamA, keyId: k.keyId, status: "in_progress", background: true });
    await operator.get(`/dashboard/teams/${teamA}/responses/resp_a_op`);
    expect((await operator.post(`/dashboard/teams/${teamA}/responses/resp_a_op/cancel`, {})).status).toBe(303);
    expect((await findResponse(db, "resp_a_op", teamA))?.status).toBe("cancelled");
  });

  test("a completed background response: a clear message next to where the form would be, and nothing changes", async () => {
    await addRow(db, { id: "resp_a_fin", teamId: teamA, keyId: k.keyId, status: "completed", background: true, response: { output: [{ type: "message", content: [{ type: "output_text", text: "done" }] }] } });
    const before = (await findResponse(db, "resp_a_fin", teamA))!;
    const page = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_fin`);
    expect(page.text).not.toContain('id="cancel-form"');
    const res = await member.post(`/dashboard/teams/${teamA}/responses/resp_a_fin/cancel`, {});
    expect(res.status).toBe(400);
    expect(res.text).toContain('<p class="form-error" id="cancel-error" role="alert">Response resp_a_fin had already ended (completed), so there is nothing to cancel. Nothing was changed.</p>');
    expect(statusOnPage(res.text)).toBe("completed");
    expect(await findResponse(db, "resp_a_fin", teamA)).toEqual(before);
  });

  test("a response that is not a background one: the API's refusal is shown on the page", async () => {
    await addRow(db, { id: "resp_a_stream", teamId: teamA, keyId: k.keyId, status: "in_progress", background: false });
    const page = await member.get(`/dashboard/teams/${teamA}/responses/resp_a_stream`);
    expect(page.text).not.toContain('id="cancel-form"');
    const res = await member.post(`/dashboard/teams/${teamA}/responses/resp_a_stream/cancel`, {});
    expect(res.status).toBe(400);
    expect(res.text).toContain("is not a background response; only background responses can be cancelled.");
    expect((await findResponse(db, "resp_a_stream", teamA))?.status).toBe("in_progress");
  });

  test("a post without the CSRF token is refused with 403 and nothing changes", async () => {
    await addRow(db, { id: "resp_a_csrf", teamId: teamA, keyId: k.keyId, status: "queued", background: true });
    await member.get(`/dashboard/teams/${teamA}/responses/resp_a_csrf`);
    const res = await member.post(`/dashboard/teams/${teamA}/responses/resp_a_csrf/cancel`, { _csrf: "" });
    expect(res.status).toBe(403);
    expect((await findResponse(db, "resp_a_csrf", teamA))?.status).toBe("queued");
  });
});

describe("cancel on a real kiln", () => {
  let server: TestServer;
  afterAll(() => server?.stop(1000));

  test("a background job waiting in the queue behind a full batch is cancelled from the page, and the API agrees", async () => {
    server = await startTestServer();
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(r.status).toBe(200);
      return (await r.json()) as { id: string; status: string };
    };
    // 16 long jobs fill the tiny model's batch, so the next one waits queued.
    const long: string[] = [];
    for (let i = 0; i < 16; i++) long.push((await call("POST", "/v1/responses", { model: server.modelId, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true })).id);
    await waitFor(() => server.deps.scheduler.load().active, { what: "16 jobs running", until: (n) => n === 16, timeoutMs: 60_000 });
    const waiting = await call("POST", "/v1/responses", { model: server.modelId, input: "Say 1", max_output_tokens: 16, background: true });
    expect((await call("GET", `/v1/responses/${waiting.id}`)).status).toBe("queued");

    const team = (await findActiveKeyWithTeam(server.deps.db, parseKey(server.key)!.id))!.team;
    const password = await addUser(server.deps.db, "carol", "member", team.id);
    const c = new DashboardClient((r) => fetch(r, { redirect: "manual" }), server.url);
    expect((await c.signIn("carol", password)).status).toBe(303);
    const page = await c.get(`/dashboard/teams/${team.id}/responses/${waiting.id}`);
    expect(statusOnPage(page.text)).toBe("queued");
    const res = await c.post(`/dashboard/teams/${team.id}/responses/${waiting.id}/cancel`, {});
    expect(res.status).toBe(303);
    const after = await c.get(res.location!);
    expect(after.text).toContain(`Cancelled response ${waiting.id}.`);
    expect(statusOnPage(after.text)).toBe("cancelled");
    expect((await call("GET", `/v1/responses/${waiting.id}`)).status).toBe("cancelled");
    // The running jobs were not touched.
    expect(server.deps.scheduler.load().active).toBe(16);
    for (const id of long) await call("POST", `/v1/responses/${id}/cancel`);
  }, 180_000);
});
