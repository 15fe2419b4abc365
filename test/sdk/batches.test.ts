// The Batch API through the official openai client against a real kiln serving the tiny text model and the built-in
// embedding model: files.create({purpose: "batch"}), batches.create/retrieve/list/cancel and files.content of the
// output file, with a 200-line chat batch and a 100-line embeddings batch: every custom_id exactly once, in input
// order, each body a real answer of its endpoint, one usage row per line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { sqliteOf } from "../helpers/databases.ts";
import { embedTestServer } from "../helpers/embed-server.ts";
import type { TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";

const EMBED = "kiln-embed-tiny-v1";
const ENDED = ["completed", "failed", "cancelled", "expired"];

let server: TestServer;
let client: OpenAI;
let chatModel: string;
beforeAll(async () => {
  ({ server, client } = await embedTestServer());
  chatModel = server.deps.registry.list().find((m) => m.capabilities.chat)!.id;
});
afterAll(() => server.stop(1000));

async function batchFile(lines: object[]) {
  const text = lines.map((l) => JSON.stringify(l)).join("\n");
  return client.files.create({ file: await toFile(new TextEncoder().encode(text), "batch.jsonl"), purpose: "batch" });
}

const chatLines = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ custom_id: `chat-${i}`, method: "POST", url: "/v1/chat/completions", body: { model: chatModel, messages: [{ role: "user", content: `Say ${i}` }], max_tokens: 4 } }));

const ended = (id: string) =>
  waitFor(() => client.batches.retrieve(id), { what: `batch ${id} to end`, until: (b) => ENDED.includes(b.status), timeoutMs: 240_000, intervalMs: 200 });

async function jsonl(fileId: string): Promise<any[]> {
  const text = await (await client.files.content(fileId)).text();
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

function usageRequestIds(): Set<string> {
  const rows = sqliteOf(server.deps.db).$client.query("SELECT request_id AS id FROM usage").all() as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

describe("batches through the openai client", () => {
  test("a 200-line chat batch: every line answered once, in order, with one usage row each", async () => {
    const file = await batchFile(chatLines(200));
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { run: "sdk" } });
    expect(created).toMatchObject({ object: "batch", endpoint: "/v1/chat/completions", input_file_id: file.id, completion_window: "24h", status: "validating", metadata: { run: "sdk" } });
    expect(created.id).toMatch(/^batch_[0-9a-f]{32}$/);
    expect(created.expires_at).toBe(created.created_at + 86_400);

    const done = await ended(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 200, completed: 200, failed: 0 });
    expect(done.error_file_id).toBeNull();
    expect(done.in_progress_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.finalizing_at).toBeGreaterThanOrEqual(done.in_progress_at!);
    expect(done.completed_at).toBeGreaterThanOrEqual(done.finalizing_at!);

    const out = await jsonl(done.output_file_id!);
    expect(out.map((l) => l.custom_id)).toEqual(chatLines(200).map((l) => l.custom_id));
    for (const l of out) {
      expect(l.id).toMatch(/^batch_req_[0-9a-f]{32}$/);
      expect(l.error).toBeNull();
      expect(l.response.status_code).toBe(200);
      expect(l.response.body).toMatchObject({ object: "chat.completion", model: chatModel, choices: [{ index: 0, message: { role: "assistant" } }] });
      expect(l.response.body.usage.completion_tokens).toBeGreaterThan(0);
    }
    const ids = out.map((l) => l.response.request_id as string);
    expect(new Set(ids).size).toBe(200);
    const billed = usageRequestIds();
    expect(ids.filter((id) => billed.has(id))).toHaveLength(200);
    // Every line's usage row is in the batch lane and names its batch, which is how a batch's cost is summed.
    const rows = sqliteOf(server.deps.db).$client.query("SELECT service_tier AS tier, batch_id AS batch, COUNT(*) AS n FROM usage WHERE batch_id = ? GROUP BY 1, 2").all(created.id);
    expect(rows).toEqual([{ tier: "batch", batch: created.id, n: 200 }]);
    const families = parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text());
    expect(sampleValue(families, "kiln_batch_lines_total", { endpoint: "/v1/chat/completions", outcome: "done" })).toBeGreaterThanOrEqual(200);
    expect(sampleValue(families, "kiln_tier_completed_requests_total", { model: chatModel, endpoint: "chat", tier: "batch" })).toBeGreaterThanOrEqual(200);
    expect(await client.files.retrieve(done.output_file_id!)).toMatchObject({ purpose: "batch_output", filename: `${created.id}_output.jsonl` });
  }, 300_000);

  test("a 100-line embeddings batch: each vector is the one the endpoint answers", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => ({ custom_id: `emb-${i}`, method: "POST", url: "/v1/embeddings", body: { model: EMBED, input: `sentence number ${i} about rivers`, encoding_format: "float" } }));
    const created = await client.batches.create({ input_file_id: (await batchFile(lines)).id, endpoint: "/v1/embeddings", completion_window: "24h" });
    const done = await ended(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 100, completed: 100, failed: 0 });
    const out = await jsonl(done.output_file_id!);
    expect(out.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    const direct = (await client.embeddings.create({ model: EMBED, input: lines[42]!.body.input, encoding_format: "float" })).data[0]!.embedding;
    for (const l of out) {
      expect(l.response.body).toMatchObject({ object: "list", model: EMBED, data: [{ object: "embedding", index: 0 }] });
      const v = l.response.body.data[0].embedding as number[];
      expect(v).toHaveLength(64);
      expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-5);
    }
    const batched = out[42].response.body.data[0].embedding as number[];
    expect(Math.max(...batched.map((x, i) => Math.abs(x - direct[i]!)))).toBeLessThan(1e-6);
  }, 300_000);

  test("responses and legacy completions lines: each answered by its endpoint, a response not stored", async () => {
    const responses = Array.from({ length: 10 }, (_, i) => ({ custom_id: `r${i}`, method: "POST", url: "/v1/responses", body: { model: chatModel, input: `Say ${i}`, max_output_tokens: 16 } }));
    const completions = Array.from({ length: 10 }, (_, i) => ({ custom_id: `c${i}`, method: "POST", url: "/v1/completions", body: { model: chatModel, prompt: `Once ${i}`, max_tokens: 4 } }));
    const [r, c] = await Promise.all([
      client.batches.create({ input_file_id: (await batchFile(responses)).id, endpoint: "/v1/responses", completion_window: "24h" }),
      client.batches.create({ input_file_id: (await batchFile(completions)).id, endpoint: "/v1/completions", completion_window: "24h" }),
    ]);
    const [rDone, cDone] = await Promise.all([ended(r.id), ended(c.id)]);
    expect<unknown[]>([rDone.status, cDone.status, rDone.errors]).toEqual(["completed", "completed", null]);
    const rOut = await jsonl(rDone.output_file_id!);
    expect(rOut.map((l) => l.custom_id)).toEqual(responses.map((l) => l.custom_id));
    for (const l of rOut) expect(l.response.body).toMatchObject({ object: "response", model: chatModel, store: false });
    // As the compatible format's batches: nothing is stored.
    const stored = await client.responses.retrieve(rOut[0].response.body.id).then(() => 200, (e) => (e as InstanceType<typeof OpenAI.APIError>).status);
    expect(stored).toBe(404);
    const cOut = await jsonl(cDone.output_file_id!);
    expect(cOut.map((l) => l.custom_id)).toEqual(completions.map((l) => l.custom_id));
    for (const l of cOut) expect(l.response.body).toMatchObject({ object: "text_completion", model: chatModel, choices: [{ index: 0 }] });
  }, 300_000);

  test("list pages newest first; cancel stops a batch and keeps what completed; an ended batch cannot be cancelled", async () => {
    // One line in ten is short; the others run long (greedy on "Hello" for up to 3000 tokens), so the cancel finds them running.
    const mixed = chatLines(300).map((l, i) => (i % 10 ? { ...l, body: { model: chatModel, messages: [{ role: "user", content: "Hello" }], temperature: 0, max_tokens: 3000 } } : l));
    const big = await client.batches.create({ input_file_id: (await batchFile(mixed)).id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor(() => client.batches.retrieve(big.id), { what: "some lines done", until: (b) => b.request_counts!.completed > 0, timeoutMs: 120_000, intervalMs: 50 });
    const cancelling = await client.batches.cancel(big.id);
    expect(cancelling.status).toBe("cancelling");
    expect(cancelling.cancelling_at).toBeGreaterThan(0);
    const done = await ended(big.id);
    expect(done.status).toBe("cancelled");
    expect(done.cancelled_at).toBeGreaterThanOrEqual(done.cancelling_at!);
    const out = await jsonl(done.output_file_id!);
    const errors = await jsonl(done.error_file_id!);
    expect(out.length).toBe(done.request_counts!.completed);
    expect(out.length).toBeLessThan(300);
    // Every line is in exactly one of the files; the ones never run say so.
    expect([...out, ...errors].map((l) => l.custom_id).sort()).toEqual(chatLines(300).map((l) => l.custom_id).sort());
    expect(errors.every((l) => l.error?.code === "batch_cancelled" && l.response === null)).toBe(true);

    const first = await client.batches.list({ limit: 2 });
    expect(first.data.map((b) => b.id)[0]).toBe(big.id);
    expect(first.has_more).toBe(true);
    const next = await client.batches.list({ limit: 10, after: first.data[1]!.id });
    expect(next.data.length).toBe(3);
    expect(next.has_more).toBe(false);

    const refused = await client.batches.cancel(big.id).then(() => null, (e) => e as InstanceType<typeof OpenAI.APIError>);
    expect(refused?.status).toBe(400);
  }, 300_000);
});
