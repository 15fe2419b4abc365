// Stored and background responses through the official openai client against a real kiln: retrieve, delete,
// cancel, input_items, previous_response_id, resumable background streams, team isolation and the 1 MiB limit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { createKey } from "../../src/db/keys-repo.ts";
import { eventsAfter } from "../../src/db/response-events-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { openaiTestServer } from "../helpers/openai-server.ts";
import type { TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let client: OpenAI;
let stranger: OpenAI;

beforeAll(async () => {
  ({ server, client } = await openaiTestServer());
  const other = await createKey(server.deps.db, (await createTeam(server.deps.db, "other-team")).id, "other");
  stranger = new OpenAI({ apiKey: other.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(() => server.stop(1000));

/** A long greedy run: the tiny model never ends this prompt, so only max_output_tokens or a cancel stops it. */
const LONG = { input: "Hello", temperature: 0, max_output_tokens: 3000 } as const;

/** The wire object, without what the SDK adds on its own (_request_id, the output_text convenience). */
function wire(r: object): Record<string, unknown> {
  const { _request_id: _a, output_text: _b, ...rest } = r as Record<string, unknown>;
  return rest;
}

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e.status ?? -1;
    throw e;
  }
}

function pollUntil(id: string, done: (s: string) => boolean, timeoutMs = 60_000): Promise<OpenAI.Responses.Response> {
  return waitFor(() => client.responses.retrieve(id), { what: `the awaited status of response ${id}`, until: (r) => done(r.status!), timeoutMs, intervalMs: 50 });
}

describe("store", () => {
  test("store: true (the default) is retrievable as created; store: false is not", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 16, temperature: 0 });
    expect((r as any).store).toBe(true);
    const got = await client.responses.retrieve(r.id);
    expect(wire(got)).toEqual(wire(r));
    const unstored = await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 16, store: false });
    expect(await status(client.responses.retrieve(unstored.id))).toBe(404);
  });

  test("a stored stream is retrievable, and its events replay with stream=true exactly as they were sent", async () => {
    const sent: any[] = [];
    for await (const ev of await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 24, temperature: 0, stream: true })) sent.push(ev);
    const final = sent.at(-1).response;
    expect(wire(await client.responses.retrieve(final.id))).toEqual(final);
    const replay: any[] = [];
    for await (const ev of await client.responses.retrieve(final.id, { stream: true })) replay.push(ev);
    expect(replay).toEqual(sent);
  });

  test("a stored stream whose client leaves stops, and is stored cancelled with what it had produced", async () => {
    const stream = await client.responses.create({ model: server.modelId, ...LONG, stream: true });
    let id = "";
    let deltas = 0;
    for await (const ev of stream) {
      if (ev.type === "response.created") id = ev.response.id;
      if (ev.type === "response.output_text.delta" && ++deltas === 5) break;
    }
    const r = await pollUntil(id, (s) => s !== "in_progress");
    expect(r.status).toBe("cancelled");
    expect(r.usage!.output_tokens).toBeGreaterThanOrEqual(5);
    expect(r.usage!.output_tokens).toBeLessThan(3000);
    expect(server.deps.scheduler.load().active).toBe(0);
  });

  test("a stored response is bounded: above KILN_MAX_STORED_RESPONSE_BYTES, 413 after inference (JSON) or before it (stream)", async () => {
    const { server: small, client: smallClient } = await openaiTestServer({ KILN_MAX_STORED_RESPONSE_BYTES: String(64 * 1024) });
    try {
      const big = { model: small.modelId, input: "Hi", max_output_tokens: 16, metadata: { pad: "x".repeat(70_000) } };
      const e = await smallClient.responses.create(big).catch((x) => x);
      expect(e.status).toBe(413);
      expect(e.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" });
      const streamed = await smallClient.responses.create({ ...big, stream: true }).catch((x) => x);
      expect(streamed.status).toBe(413);
      // Nothing was stored, and the same request without storage is fine.
      expect((sqliteOf(small.deps.db).$client.query("SELECT count(*) AS n FROM responses").get() as { n: number }).n).toBe(0);
      expect((await smallClient.responses.create({ ...big, store: false })).status).toMatch(/completed|incomplete/);
    } finally {
      await small.stop(1000);
    }
  });

  test("delete: the response is gone for GET and DELETE alike", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Hi", max_output_tokens: 16 });
    // The SDK's delete resolves to nothing; the wire answer is checked raw.
    const res = await fetch(`${server.url}/v1/responses/${r.id}`, { method: "DELETE", headers: { authorization: `Bearer ${server.key}` } });
    expect(await res.json()).toEqual({ id: r.id, object: "response", deleted: true });
    const gone = await client.responses.retrieve(r.id).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.error).toMatchObject({ type: "invalid_request_error" });
    expect(await status(client.responses.delete(r.id))).toBe(404);
    expect(await status(client.responses.inputItems.list(r.id))).toBe(404);
  });

  test("input_items pages both ways with first_id, last_id and has_more", async () => {
    const input = ["one", "two", "three", "four", "five"].map((text) => ({ role: "user" as const, content: text }));
    const r = await client.responses.create({ model: server.modelId, input, max_output_tokens: 16 });
    const texts = (data: any[]) => data.map((it) => it.content[0].text);
    const get = async (q: Record<string, string>) =>
      (await fetch(`${server.url}/v1/responses/${r.id}/input_items?${new URLSearchParams(q)}`, { headers: { authorization: `Bearer ${server.key}` } })).json() as Promise<any>;

    const first = await get({ limit: "2" });
    expect(texts(first.data)).toEqual(["five", "four"]);
    expect(first).toMatchObject({ object: "list", first_id: first.data[0].id, last_id: first.data[1].id, has_more: true });
    const second = await get({ limit: "2", after: first.last_id });
    expect(texts(second.data)).toEqual(["three", "two"]);
    const last = await get({ limit: "2", after: second.last_id });
    expect(texts(last.data)).toEqual(["one"]);
    expect(last.has_more).toBe(false);

    const asc = await get({ order: "asc", limit: "3" });
    expect(texts(asc.data)).toEqual(["one", "two", "three"]);
    expect(asc.has_more).toBe(true);
    expect(texts((await get({ order: "asc", after: asc.last_id })).data)).toEqual(["four", "five"]);

    // The SDK's auto-pagination walks every item, newest first.
    const all: string[] = [];
    for await (const it of client.responses.inputItems.list(r.id, { limit: 2 })) all.push((it as any).content[0].text);
    expect(all).toEqual(["five", "four", "three", "two", "one"]);
    expect(await status(client.responses.inputItems.list(r.id, { limit: 101 }))).toBe(400);
    // Ids name items: the same id twice in one input is refused.
    const dup = await client.responses.create({ model: server.modelId, input: [{ type: "message", id: "msg_same", role: "user", content: "a" }, { type: "message", id: "msg_same", role: "user", content: "b" }] as any }).catch((x) => x);
    expect(dup.status).toBe(400);
    expect(dup.error.param).toBe("input");
  });
});

describe("previous_response_id", () => {
  test("continues the stored conversation and bills the same input tokens as sending it in full", async () => {
    const first = await client.responses.create({ model: server.modelId, input: "Name a colour.", max_output_tokens: 16, temperature: 0 });
    const next = await client.responses.create({ model: server.modelId, previous_response_id: first.id, input: "And another?", max_output_tokens: 16, temperature: 0 });
    expect(next.previous_response_id).toBe(first.id);
    const full = await client.responses.create({
      model: server.modelId, store: false, max_output_tokens: 16, temperature: 0,
      input: [{ role: "user", content: "Name a colour." }, ...(first.output as any[]), { role: "user", content: "And another?" }],
    });
    expect(next.usage!.input_tokens).toBe(full.usage!.input_tokens);
    expect(next.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens + first.usage!.output_tokens);
    // The same prompt under greedy decoding gives the same answer.
    expect(next.output_text).toBe(full.output_text);
    // input_tokens counts the chain the same way.
    const counted = await client.responses.inputTokens.count({ model: server.modelId, previous_response_id: first.id, input: "And another?" });
    expect(counted.input_tokens).toBe(next.usage!.input_tokens);
  });

  test("an unknown, unstored or deleted previous response is a 404 naming previous_response_id", async () => {
    const unstored = await client.responses.create({ model: server.modelId, input: "Hi", max_output_tokens: 16, store: false });
    for (const id of ["resp_doesnotexist", unstored.id]) {
      const e = await client.responses.create({ model: server.modelId, previous_response_id: id, input: "Hi" }).catch((x) => x);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect(e.error).toMatchObject({ type: "invalid_request_error", param: "previous_response_id" });
    }
  });
});

describe("background", () => {
  test("returns queued at once, and polling reaches completed", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 32, background: true });
    expect(r.background).toBe(true);
    // Queued, as the format answers, even when a worker slot was free and it started at once.
    expect(r.status).toBe("queued");
    const done = await pollUntil(r.id, (s) => s === "completed" || s === "incomplete");
    expect(done.output_text.length).toBeGreaterThan(0);
    expect(done.usage!.output_tokens).toBeGreaterThan(0);
  });

  test("background: true with store: false is a 400", async () => {
    const e = await client.responses.create({ model: server.modelId, input: "Hi", background: true, store: false }).catch((x) => x);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.error.param).toBe("background");
  });

  test("a background stream resumed with starting_after yields exactly the remaining events, in order, with their numbers", async () => {
    const seen: any[] = [];
    const first = await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 48, temperature: 0, background: true, stream: true });
    for await (const ev of first) {
      seen.push(ev);
      if (seen.length === 6) break; // leaves the connection; the job goes on
    }
    const id = seen[0].response.id;
    expect(seen.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen.slice(0, 2).map((e) => e.type)).toEqual(["response.created", "response.queued"]);
    const rest: any[] = [];
    for await (const ev of await client.responses.retrieve(id, { stream: true, starting_after: 5 })) rest.push(ev);
    expect(rest.map((e) => e.sequence_number)).toEqual(rest.map((_, i) => 6 + i));
    expect(["response.completed", "response.incomplete"]).toContain(rest.at(-1).type);
    // The whole log, replayed, is the two parts joined.
    const all: any[] = [];
    for await (const ev of await client.responses.retrieve(id, { stream: true })) all.push(ev);
    expect(all).toEqual([...seen, ...rest]);
    expect(rest.at(-1).response.output_text ?? rest.at(-1).response.output[0].content[0].text).toBeTruthy();
  });

  test("cancel ends a running job cancelled and its sequence leaves the worker's batch", async () => {
    const r = await client.responses.create({ model: server.modelId, ...LONG, background: true });
    await pollUntil(r.id, (s) => s === "in_progress");
    // Cancelled once it has written some text, so the usage below counts real tokens.
    await waitFor(async () => (await eventsAfter(server.deps.db, r.id, -1)).some((e) => e.json.includes('"response.output_text.delta"')), { what: `a text delta stored for ${r.id}` });
    expect(server.deps.scheduler.load().active).toBe(1);
    const cancelled = await client.responses.cancel(r.id);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.usage!.output_tokens).toBeGreaterThan(0);
    expect(cancelled.usage!.output_tokens).toBeLessThan(3000);
    expect(server.deps.scheduler.load()).toEqual({ waiting: 0, active: 0 });
    // Cancelling again returns it unchanged; so does GET.
    expect(wire(await client.responses.cancel(r.id))).toEqual(wire(cancelled));
    expect(wire(await client.responses.retrieve(r.id))).toEqual(wire(cancelled));
    // Its stored stream ends with response.incomplete carrying the cancelled response (the clients know no
    // response.cancelled event), so the SDK's stream helper finishes with it.
    const events: any[] = [];
    for await (const ev of await client.responses.retrieve(r.id, { stream: true })) events.push(ev);
    expect(events.at(-1).type).toBe("response.incomplete");
    expect(events.at(-1).response.status).toBe("cancelled");
    const final = await client.responses.stream({ response_id: r.id }).finalResponse();
    expect(final.status).toBe("cancelled");
    expect(final.output_text).toBe(cancelled.output_text ?? (cancelled.output[0] as any).content[0].text);
  });

  test("cancelling a response that is not a background one is a 400", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Hi", max_output_tokens: 16 });
    expect(await status(client.responses.cancel(r.id))).toBe(400);
  });

  test("the raw JSON body may be 1,048,576 bytes and not one more", async () => {
    const send = (size: number) => {
      const base = JSON.stringify({ model: server.modelId, input: "Hi", max_output_tokens: 16, background: true, metadata: { pad: "" } });
      const body = base.replace('"pad":""', `"pad":"${"x".repeat(size - base.length)}"`);
      expect(Buffer.byteLength(body)).toBe(size);
      return fetch(`${server.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body });
    };
    const over = await send(1_048_577);
    expect(over.status).toBe(413);
    expect(((await over.json()) as any).error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" });
    const at = await send(1_048_576);
    expect(at.status).toBe(200);
    const r = (await at.json()) as any;
    await pollUntil(r.id, (s) => s === "completed" || s === "incomplete");
  });
});

describe("teams", () => {
  test("another team's key gets 404 on every endpoint for the id", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Hi", max_output_tokens: 16, background: true });
    await pollUntil(r.id, (s) => s === "completed" || s === "incomplete");
    expect(await status(stranger.responses.retrieve(r.id))).toBe(404);
    expect(await status(stranger.responses.retrieve(r.id, { stream: true }))).toBe(404);
    expect(await status(stranger.responses.inputItems.list(r.id))).toBe(404);
    expect(await status(stranger.responses.cancel(r.id))).toBe(404);
    expect(await status(stranger.responses.delete(r.id))).toBe(404);
    expect(await status(stranger.responses.create({ model: server.modelId, previous_response_id: r.id, input: "Hi" }))).toBe(404);
    // Still there for its owner.
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
  });
});
