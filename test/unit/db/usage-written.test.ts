// The usage rows chat writes through a real server: one per request id, its ending, and its cost from the model's
// pricing; on every dialect (the server on SQLite in its data dir, or on a fresh Postgres database).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { costMicros } from "../../../src/billing/cost.ts";
import { DIALECTS } from "../../helpers/databases.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";
import { freshPostgresDatabase } from "../../helpers/shared-postgres.ts";
import { waitFor } from "../../helpers/wait-for.ts";

describe.each(DIALECTS)("usage rows written by chat ($name)", (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    const database: Record<string, string> = dialect.name === "postgres" ? { KILN_DATABASE_URL: await freshPostgresDatabase() } : {};
    s = await startTestServer({ KILN_REQUEST_TIMEOUT_MS: "1000", ...database });
  });
  afterAll(() => s.stop(1000));

  function post(body: Record<string, unknown>, signal?: AbortSignal) {
    return fetch(`${s.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: s.modelId, messages: [{ role: "user", content: "Tell me about rivers and the sea" }], temperature: 0, ...body }),
      signal,
    });
  }

  /** The row for a request id; rows of streams are written when the stream closes, so this waits for it. */
  async function rowOf(requestId: string) {
    const { q, t } = s.deps.db;
    return (await waitFor(async () => (await q.select().from(t.usage).where(eq(t.usage.requestId, requestId)))[0], { what: `the usage row of ${requestId}` }))!;
  }

  test("a finished answer: completed, under the response's request id, priced in micro-units", async () => {
    const res = await post({ max_tokens: 6 });
    const body = (await res.json()) as any;
    const row = await rowOf(res.headers.get("x-request-id")!);
    const tokens = { inputTokens: body.usage.prompt_tokens, outputTokens: body.usage.completion_tokens };
    const pricing = s.deps.registry.get(s.modelId)!.pricing;
    expect(pricing.inputPerMillion + pricing.outputPerMillion).toBeGreaterThan(0);
    expect(row).toMatchObject({ status: "completed", endpoint: "chat", ...tokens, reasoningTokens: 0, cachedTokens: 0 });
    expect(row.costMicros).toBe(costMicros(pricing, tokens));
    expect(row.costMicros).toBeGreaterThan(0);
  });

  test("a stream read to the end is completed", async () => {
    const res = await post({ max_tokens: 4, stream: true });
    await res.text();
    expect(await rowOf(res.headers.get("x-request-id")!)).toMatchObject({ status: "completed" });
  });

  test("a stream the client leaves is client_gone, with the tokens really generated (not 0)", async () => {
    const abort = new AbortController();
    const res = await post({ max_tokens: 3000, ignore_eos: true, stream: true }, abort.signal);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = "";
    // Read until the client has seen at least 20 chunks, then leave mid-stream.
    while ((text.match(/"content":/g) ?? []).length < 21) text += dec.decode((await reader.read()).value);
    abort.abort();
    await reader.closed.catch(() => {});
    const row = await rowOf(res.headers.get("x-request-id")!);
    expect(row.status).toBe("client_gone");
    // Each content chunk is at least one token; generation stops within a step of the disconnect, never near max_tokens.
    expect(row.outputTokens).toBeGreaterThanOrEqual(20);
    expect(row.outputTokens).toBeLessThan(3000);
    expect(row.costMicros).toBe(costMicros(s.deps.registry.get(s.modelId)!.pricing, row));
  });

  test("a non-streamed answer cut by the time limit is timed_out, with the tokens really generated (not 0)", async () => {
    const res = await post({ max_tokens: 4000, ignore_eos: true });
    expect(res.status).toBe(504);
    const row = await rowOf(res.headers.get("x-request-id")!);
    expect(row.status).toBe("timed_out");
    // A second of decoding on the tiny model is far more than one token, and the 4,000-token budget was not reached.
    expect(row.outputTokens).toBeGreaterThan(1);
    expect(row.outputTokens).toBeLessThan(4000);
  });
});
