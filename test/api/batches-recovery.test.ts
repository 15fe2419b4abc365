// Durability of batches: kiln runs as a real process, a 200-line chat batch is part done when the process is killed
// with SIGKILL (or drained with SIGTERM), and a new process on the same data dir finishes it: every line is in the
// output exactly once, the lines done before the kill are not run again, and there is one usage row per line (a line
// the drain cut after it was billed runs again without a second charge).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { lineIds } from "../../src/api/batches/line-outcome.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const LINES = 200;

async function call(server: ServerProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  expect(res.status).toBe(200);
  return res.json();
}

/** Uploads a 200-line chat batch whose lines each generate a while, and creates the batch. */
async function startBatch(server: ServerProcess): Promise<string> {
  const model = (await call(server, "GET", "/v1/models")).data[0].id as string;
  const lines = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `line-${i}`, method: "POST", url: "/v1/chat/completions", body: { model, messages: [{ role: "user", content: `Hello ${i}` }], temperature: 0, max_tokens: 120 } }));
  const form = new FormData();
  form.append("purpose", "batch");
  form.append("file", new Blob([lines.join("\n")]), "batch.jsonl");
  const file = (await (await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body: form })).json()) as { id: string };
  return (await call(server, "POST", "/v1/batches", { input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" })).id;
}

const batchOf = (server: ServerProcess, id: string) => call(server, "GET", `/v1/batches/${id}`);

/** The data dir's database, read beside the server (WAL lets a reader in while it writes). */
function readDb(dataDir: string): Database {
  return new Database(join(dataDir, "kiln.db"), { readonly: true });
}

/** Done lines' answers (their chat.completion ids) as the database has them now. */
function doneAnswers(dataDir: string, batchId: string): Map<number, string> {
  const db = readDb(dataDir);
  try {
    const rows = db.query("SELECT line, result_json AS r FROM batch_lines WHERE batch_id = ? AND status = 'done'").all(batchId) as { line: number; r: string }[];
    return new Map(rows.map((row) => [row.line, JSON.parse(row.r).response.body.id as string]));
  } finally {
    db.close();
  }
}

/** Pending lines that already have a usage row (under the request id derived from the batch and the line). */
function billedPending(dataDir: string, batchId: string): number {
  const db = readDb(dataDir);
  try {
    const lines = db.query("SELECT line FROM batch_lines WHERE batch_id = ? AND status = 'pending'").all(batchId) as { line: number }[];
    const ids = lines.map((l) => lineIds(batchId, l.line).requestId);
    return (db.query(`SELECT count(*) AS n FROM usage WHERE request_id IN (${ids.map(() => "?").join(",")})`).get(...ids) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Waits for the batch to complete on `server`, then checks the output and the usage rows against the lines. */
async function checkFinished(server: ServerProcess, dataDir: string, id: string, before: Map<number, string>): Promise<void> {
  const done = await waitFor(() => batchOf(server, id), { what: `batch ${id} completed`, until: (b) => b.status === "completed", timeoutMs: 240_000, intervalMs: 200 });
  expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
  const text = await (await fetch(`${server.url}/v1/files/${done.output_file_id}/content`, { headers: { authorization: `Bearer ${server.key}` } })).text();
  const out = text.trim().split("\n").map((l) => JSON.parse(l));
  expect(out.map((l) => l.custom_id)).toEqual(Array.from({ length: LINES }, (_, i) => `line-${i}`));
  // A line done before the stop kept its answer: it was not run again.
  for (const [line, answerId] of before) expect(out[line - 1].response.body.id).toBe(answerId);
  const requestIds = out.map((l) => l.response.request_id as string);
  const db = readDb(dataDir);
  try {
    const rows = db.query(`SELECT request_id AS id FROM usage WHERE request_id IN (${requestIds.map(() => "?").join(",")})`).all(...requestIds) as { id: string }[];
    expect(rows.length).toBe(LINES);
    expect((db.query("SELECT count(*) AS n FROM usage WHERE endpoint = 'chat'").get() as { n: number }).n).toBe(LINES);
  } finally {
    db.close();
  }
}

describe("batches survive the process", () => {
  test("kill -9 mid-batch: the next start runs the rest; every line once in the output, one usage row each", async () => {
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1" };
    const first = await startServerProcess({ dataDir, modelsDir, env });
    const id = await startBatch(first);
    const part = await waitFor(() => batchOf(first, id), { what: "a part of the batch done", until: (b) => b.request_counts.completed >= 20, timeoutMs: 120_000, intervalMs: 20 });
    await first.kill9();
    expect(part.request_counts.completed).toBeLessThan(LINES);
    const before = doneAnswers(dataDir, id);
    expect(before.size).toBeGreaterThanOrEqual(20);
    // The kill cut lines short: the next start must put them back and run them again under their request ids.
    const db = readDb(dataDir);
    expect((db.query("SELECT count(*) AS n FROM batch_lines WHERE batch_id = ? AND status = 'running'").get(id) as { n: number }).n).toBeGreaterThan(0);
    db.close();
    expect(before.size).toBeLessThan(LINES);

    const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
    await checkFinished(second, dataDir, id, before);
    expect(await second.stop()).toBe(0);
  }, 400_000);

  test("SIGTERM mid-batch: the drain leaves no line running, and the next start finishes the batch", async () => {
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1", KILN_SHUTDOWN_GRACE_MS: "300" };
    const first = await startServerProcess({ dataDir, modelsDir, env });
    const id = await startBatch(first);
    await waitFor(() => batchOf(first, id), { what: "a part of the batch done", until: (b) => b.request_counts.completed >= 20, timeoutMs: 120_000, intervalMs: 20 });
    expect(await first.stop()).toBe(0);
    const db = readDb(dataDir);
    const states = db.query("SELECT status, count(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY status").all(id) as { status: string; n: number }[];
    db.close();
    expect(states.find((s) => s.status === "running")).toBeUndefined();
    expect(states.find((s) => s.status === "pending")?.n ?? 0).toBeGreaterThan(0);
    // Lines the drain cut short were billed for what they ran and put back: their re-run must not bill them again.
    const cutBilled = billedPending(dataDir, id);
    expect(cutBilled).toBeGreaterThan(0);
    const before = doneAnswers(dataDir, id);

    const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
    await checkFinished(second, dataDir, id, before);
    expect(await second.stop()).toBe(0);
  }, 400_000);
});
