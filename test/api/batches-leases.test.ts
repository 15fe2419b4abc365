// Batches across two replicas on one Postgres: the replica running a batch is killed with SIGKILL mid-batch, and the
// other, once the lease has run out, takes the batch over and finishes it: every line once in the output, the lines
// done before the kill not run again, and one usage row per line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { dirname } from "node:path";
import { closeDatabase, openDatabase } from "../../src/db/client.ts";
import { createFirstTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { freshPostgresDatabase } from "../helpers/shared-postgres.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess } from "../load/server-process.ts";

const LINES = 100;
let url: string;
let pg: SQL;
let key: string;
let other: TestServer | undefined;

beforeAll(async () => {
  url = await freshPostgresDatabase();
  const db = await openDatabase(tempDir("kiln-batch-leases-"), { url });
  key = (await createFirstTeam(db, "default", "first key", () => {}))!.key;
  await closeDatabase(db);
  pg = new SQL(url, { max: 1 });
});
afterAll(async () => {
  await other?.stop(1000);
  await pg.close();
});

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  expect(res.status).toBe(200);
  return res.json();
}

describe("batch leases on Postgres", () => {
  test("the replica running a batch dies; the other takes it over and finishes it, each line once", async () => {
    const env = { KILN_DATABASE_URL: url, KILN_LEASE_MS: "2000", KILN_THREADS: "1" };
    const first = await startServerProcess({ dataDir: tempDir(), modelsDir: dirname(await tinyModelDir()), env, key });
    other = await startTestServer(env, { key });
    const model = other.modelId;
    const lines = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: { model, messages: [{ role: "user", content: `Hello ${i}` }], temperature: 0, max_tokens: 120 } }));
    const form = new FormData();
    form.append("purpose", "batch");
    form.append("file", new Blob([lines.join("\n")]), "batch.jsonl");
    const file = (await (await fetch(`${first.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })).json()) as { id: string };
    const { id } = await call(first.url, "POST", "/v1/batches", { input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor(() => call(first.url, "GET", `/v1/batches/${id}`), { what: "part of the batch done on the first replica", until: (b) => b.request_counts.completed >= 10, timeoutMs: 120_000, intervalMs: 20 });
    await first.kill9();
    const doneBefore = (await pg`SELECT line, result_json FROM batch_lines WHERE batch_id = ${id} AND status = 'done'`) as { line: number; result_json: string }[];
    expect(doneBefore.length).toBeLessThan(LINES);
    const [held] = (await pg`SELECT lease_owner FROM batches WHERE id = ${id}`) as { lease_owner: string }[];
    expect(held!.lease_owner).not.toBe(other.deps.live.replica);

    const s = other;
    const done = await waitFor(() => call(s.url, "GET", `/v1/batches/${id}`), { what: "the batch completed by the other replica", until: (b) => b.status === "completed", timeoutMs: 240_000, intervalMs: 200 });
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    expect(((await pg`SELECT lease_owner FROM batches WHERE id = ${id}`) as { lease_owner: string }[])[0]!.lease_owner).toBe(s.deps.live.replica);
    const out = (await (await fetch(`${s.url}/v1/files/${done.output_file_id}/content`, { headers: { authorization: `Bearer ${key}` } })).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(out.map((l) => l.custom_id)).toEqual(Array.from({ length: LINES }, (_, i) => `l${i}`));
    for (const d of doneBefore) expect(out[d.line - 1].response.body.id).toBe(JSON.parse(d.result_json).response.body.id);
    const requestIds = out.map((l) => l.response.request_id as string);
    const billed = (await pg`SELECT request_id FROM usage WHERE request_id IN ${pg(requestIds)}`) as { request_id: string }[];
    expect(billed.length).toBe(LINES);
  }, 400_000);
});
