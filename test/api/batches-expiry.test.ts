// A batch whose completion window ends while it runs (its expires_at moved into the past in the database, as 24 hours
// passing would leave it) ends expired with what it completed: the output file holds the lines answered, the error file
// the ones never run with code batch_expired, each line in exactly one of them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sqliteOf } from "../helpers/databases.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let server: TestServer;
beforeAll(async () => (server = await startTestServer()));
afterAll(() => server.stop(1000));

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  expect(res.status).toBe(200);
  return res.headers.get("content-type")?.includes("json") ? res.json() : res.text();
}

test("past its window a running batch ends expired, keeping what completed", async () => {
  // One line in ten is short; the others run long, so the window's end finds most of them running or not started.
  const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({
    custom_id: `x${i}`, method: "POST", url: "/v1/chat/completions",
    body: i % 10 ? { model: server.modelId, messages: [{ role: "user", content: "Hello" }], temperature: 0, max_tokens: 3000 } : { model: server.modelId, messages: [{ role: "user", content: `Say ${i}` }], max_tokens: 4 },
  }));
  const form = new FormData();
  form.append("purpose", "batch");
  form.append("file", new Blob([lines.join("\n")]), "batch.jsonl");
  const file = (await (await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body: form })).json()) as { id: string };
  const { id } = await api("POST", "/v1/batches", { input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
  await waitFor(() => api("GET", `/v1/batches/${id}`), { what: "a line done", until: (b) => b.request_counts.completed > 0, intervalMs: 20 });
  sqliteOf(server.deps.db).$client.query("UPDATE batches SET expires_at = unixepoch() - 1 WHERE id = ?").run(id);

  const done = await waitFor(() => api("GET", `/v1/batches/${id}`), { what: "the batch expired", until: (b) => b.status === "expired", timeoutMs: 60_000 });
  expect(done.expired_at).toBeGreaterThan(0);
  const out = (await api("GET", `/v1/files/${done.output_file_id}/content`)).trim().split("\n").map((l: string) => JSON.parse(l));
  const errors = (await api("GET", `/v1/files/${done.error_file_id}/content`)).trim().split("\n").map((l: string) => JSON.parse(l));
  expect(out.length).toBe(done.request_counts.completed);
  expect(out.every((l: any) => l.response.status_code === 200)).toBe(true);
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.every((l: any) => l.response === null && l.error.code === "batch_expired")).toBe(true);
  expect([...out, ...errors].map((l) => l.custom_id).sort()).toEqual(lines.map((_, i) => `x${i}`).sort());
}, 120_000);
