// What POST /v1/batches refuses, on a real kiln: a batch whose file has a bad line fails at validating naming the line
// (with the endpoint's own message for a bad body), as do a wrong url, a repeated custom_id, stream: true and a file
// past the line limit; a file of another team is a 404, a file of another purpose or past the size limit a 400, and
// the create body is checked by its schema. A key revoked while its batch runs fails the lines still to run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_BATCH_FILE_BYTES, MAX_BATCH_LINES } from "../../src/api/batches/validate.ts";
import { insertFile } from "../../src/db/files-repo.ts";
import { createKey, revokeKey } from "../../src/db/keys-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { newFileId } from "../../src/files/file-id.ts";
import { sqliteOf } from "../helpers/databases.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

const CHAT = "/v1/chat/completions";
let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

async function api(method: string, path: string, body?: unknown, key = server.key): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: await res.json() };
}

async function upload(text: string, purpose = "batch", key = server.key): Promise<string> {
  const form = new FormData();
  form.append("purpose", purpose);
  form.append("file", new Blob([text]), "input.jsonl");
  const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

const good = (i: number) => ({ custom_id: `c${i}`, method: "POST", url: CHAT, body: { model: server.modelId, messages: [{ role: "user", content: "hi" }], max_tokens: 2 } });
const jsonl = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join("\n");

/** Creates a batch of `lines` and waits for its validation to end it (failed) or pass (in_progress or later). */
async function validated(lines: unknown[] | string): Promise<any> {
  const file = await upload(typeof lines === "string" ? lines : jsonl(lines));
  const created = await api("POST", "/v1/batches", { input_file_id: file, endpoint: CHAT, completion_window: "24h" });
  expect(created.status).toBe(200);
  return await waitFor(async () => (await api("GET", `/v1/batches/${created.json.id}`)).json, { what: "validation to end", until: (b) => b.status !== "validating", timeoutMs: 60_000 });
}

describe("a bad line fails the batch at validating, naming the line", () => {
  test("a body the endpoint refuses: the endpoint's own message, param under body, and nothing runs", async () => {
    const bad = { model: server.modelId, messages: [{ role: "user", content: "hi" }], temperature: "hot" };
    const direct = await api("POST", CHAT, bad);
    expect(direct.status).toBe(400);
    const usageBefore = (sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n;
    const b = await validated([good(1), good(2), { custom_id: "c3", method: "POST", url: CHAT, body: bad }]);
    expect(b.status).toBe("failed");
    expect(b.failed_at).toBeGreaterThan(0);
    expect(b.errors).toEqual({ object: "list", data: [{ line: 3, code: "invalid_request", message: direct.json.error.message, param: `body.${direct.json.error.param}` }] });
    expect(b.request_counts).toEqual({ total: 0, completed: 0, failed: 0 });
    expect((sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n).toBe(usageBefore);
  });

  test("an unknown model is the endpoint's 404 code", async () => {
    const b = await validated([{ ...good(1), body: { ...good(1).body, model: "no-such-model" } }]);
    expect(b.errors.data).toEqual([{ line: 1, code: "model_not_found", message: "The model 'no-such-model' does not exist", param: "body.model" }]);
  });

  test("wrong url, repeated custom_id, stream: true, a line that is not JSON: each named", async () => {
    const b = await validated([good(1), { ...good(2), url: "/v1/embeddings" }, good(1), { ...good(4), body: { ...good(4).body, stream: true } }].map((l) => JSON.stringify(l)).join("\n") + "\n{oops\n");
    expect(b.errors.data.map((e: any) => [e.line, e.code, e.param])).toEqual([
      [2, "invalid_url", "url"],
      [3, "duplicate_custom_id", "custom_id"],
      [4, "invalid_request", "body.stream"],
      [5, "invalid_json_line", null],
    ]);
  });

  test(`more than ${MAX_BATCH_LINES} lines`, async () => {
    const b = await validated(jsonl(Array.from({ length: MAX_BATCH_LINES + 1 }, (_, i) => good(i))));
    expect(b.errors.data).toEqual([{ line: MAX_BATCH_LINES + 1, code: "too_many_requests", message: expect.stringContaining(`at most ${MAX_BATCH_LINES} requests`), param: null }]);
  }, 120_000);
});

describe("the create request's own refusals", () => {
  test("another team's file is a 404, as an unknown one", async () => {
    const other = await createKey(server.deps.db, (await createTeam(server.deps.db, "batch-other")).id, "other");
    const theirs = await upload(jsonl([good(1)]), "batch", other.key);
    for (const id of [theirs, "file-00000000000000000000000000000000"]) {
      const r = await api("POST", "/v1/batches", { input_file_id: id, endpoint: CHAT, completion_window: "24h" });
      expect(r.status).toBe(404);
      expect(r.json.error).toMatchObject({ code: "file_not_found", param: "input_file_id" });
    }
    // And another team's batch is not found either.
    const mine = await api("POST", "/v1/batches", { input_file_id: await upload(jsonl([good(1)])), endpoint: CHAT, completion_window: "24h" });
    expect((await api("GET", `/v1/batches/${mine.json.id}`, undefined, other.key)).status).toBe(404);
    expect((await api("POST", `/v1/batches/${mine.json.id}/cancel`, undefined, other.key)).status).toBe(404);
  });

  test("a file of another purpose is a 400", async () => {
    const r = await api("POST", "/v1/batches", { input_file_id: await upload(jsonl([good(1)]), "user_data"), endpoint: CHAT, completion_window: "24h" });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_file_purpose", param: "input_file_id" });
  });

  test("a file past the size limit is a 400 naming both sizes, before it is read", async () => {
    // A row for a file of that size (uploading 200 MB would only slow the suite: the check reads the row's size).
    const teamId = (sqliteOf(server.deps.db).$client.query("SELECT team_id AS t FROM api_keys ORDER BY id LIMIT 1").get() as { t: number }).t;
    const keyId = Number(server.key.split("|")[1]);
    const id = newFileId();
    await insertFile(server.deps.db, { id, teamId, keyId, filename: "huge.jsonl", purpose: "batch", bytes: MAX_BATCH_FILE_BYTES + 1, createdAt: 1 });
    const r = await api("POST", "/v1/batches", { input_file_id: id, endpoint: CHAT, completion_window: "24h" });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain(`${MAX_BATCH_FILE_BYTES + 1} bytes`);
    expect(r.json.error.message).toContain(`at most ${MAX_BATCH_FILE_BYTES} bytes`);
  });

  test("an endpoint outside the list and another window are schema 400s", async () => {
    const file = await upload(jsonl([good(1)]));
    const wrongEndpoint = await api("POST", "/v1/batches", { input_file_id: file, endpoint: "/v1/images/generations", completion_window: "24h" });
    expect(wrongEndpoint.status).toBe(400);
    expect(wrongEndpoint.json.error.param).toBe("endpoint");
    const wrongWindow = await api("POST", "/v1/batches", { input_file_id: file, endpoint: CHAT, completion_window: "1h" });
    expect(wrongWindow.status).toBe(400);
    expect(wrongWindow.json.error).toMatchObject({ param: "completion_window", message: 'completion_window must be "24h"' });
  });
});

test("a key revoked while its batch runs: the lines still to run fail with the 401, the rest completed", async () => {
  const team = await createTeam(server.deps.db, "batch-revoked");
  const k = await createKey(server.deps.db, team.id, "soon revoked");
  const lines = Array.from({ length: 200 }, (_, i) => ({ ...good(i), body: { ...good(i).body, max_tokens: 64 } }));
  const created = await api("POST", "/v1/batches", { input_file_id: await upload(jsonl(lines), "batch", k.key), endpoint: CHAT, completion_window: "24h" }, k.key);
  // Another team's key cannot see it.
  expect((await api("GET", `/v1/batches/${created.json.id}`)).status).toBe(404);
  const counts = async () => (sqliteOf(server.deps.db).$client.query("SELECT status, count(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY status").all(created.json.id) as { status: string; n: number }[]);
  await waitFor(counts, { what: "a line done", until: (c) => c.some((r) => r.status === "done") });
  await revokeKey(server.deps.db, k.id);
  const ended = await waitFor(() => sqliteOf(server.deps.db).$client.query("SELECT status, error_file_id AS e FROM batches WHERE id = ?").get(created.json.id) as { status: string; e: string | null }, { what: "the batch ended", until: (b) => b.status === "completed", timeoutMs: 120_000 });
  const final = await counts();
  const failed = final.find((r) => r.status === "failed")?.n ?? 0;
  expect(failed).toBeGreaterThan(0);
  expect(final.reduce((n, r) => n + r.n, 0)).toBe(200);
  const errors = (await server.deps.files.get(ended.e!))!;
  const rows = new TextDecoder().decode(await errors.bytes()).trim().split("\n").map((l) => JSON.parse(l));
  expect(rows).toHaveLength(failed);
  for (const r of rows) expect([r.response.status_code, r.response.body.error.code]).toEqual([401, "invalid_api_key"]);
}, 120_000);
