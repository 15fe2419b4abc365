// Built-in web_search end to end: the official openai client against a real kiln on the tiny model, searching a
// fake SearXNG on loopback. Random weights never call the tool by themselves, so every test forces the search.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import OpenAI from "openai";
import { usage } from "../../src/db/schema.ts";
import { FAKE_RESULTS, type FakeMode, type FakeSearxng, startFakeSearxng } from "../helpers/fake-searxng.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let client: OpenAI;
let fake: FakeSearxng;
const WEB_URLS = FAKE_RESULTS.filter((r) => r.url.startsWith("https://")).map((r) => r.url);

beforeAll(async () => {
  fake = startFakeSearxng();
  server = await startTestServer({ KILN_WEB_SEARCH_URL: fake.url, KILN_WEB_SEARCH_TIMEOUT_MS: "500", KILN_WEB_SEARCH_MAX_BYTES: "65536" });
  client = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server.stop(1000);
  fake.stop();
});

const ask = () => ({
  model: server.modelId, input: "What is the capital of France?", temperature: 0, max_output_tokens: 120,
  tools: [{ type: "web_search" as const }], tool_choice: "required" as const,
});

/** Code-point slicing, as the annotation indexes count. */
const cp = (s: string) => Array.from(s);

function checkCitations(msg: OpenAI.Responses.ResponseOutputMessage, urls: string[]) {
  const part = msg.content[0] as OpenAI.Responses.ResponseOutputText;
  expect(part.annotations.length).toBeGreaterThan(0);
  for (const a of part.annotations) {
    if (a.type !== "url_citation") throw new Error(`unexpected annotation ${a.type}`);
    expect(urls).toContain(a.url);
    expect(a.title.length).toBeGreaterThan(0);
    expect(0 <= a.start_index && a.start_index < a.end_index && a.end_index <= cp(part.text).length).toBe(true);
    const span = cp(part.text).slice(a.start_index, a.end_index).join("");
    // Either a "[n]" marker or, when the model cited nothing, the whole answer.
    expect(/^\[\d+\]$/.test(span) || span === part.text).toBe(true);
  }
}

async function rawEvents(body: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await res.text();
  return text.trim().split("\n\n").map((f) => JSON.parse(f.split("\n")[1]!.replace(/^data: /, "")));
}

describe("web_search", () => {
  test("non-streamed: a web_search_call item with the query and sources, then a message citing them; usage summed over both steps and settled once", async () => {
    fake.mode = "ok";
    const before = fake.log.length;
    const { data: r, response } = await client.responses.create(ask()).withResponse();
    expect(r.status === "completed" || r.status === "incomplete").toBe(true);
    const ws = r.output[0] as OpenAI.Responses.ResponseFunctionWebSearch;
    expect(ws.type).toBe("web_search_call");
    expect(ws.id).toMatch(/^ws_[0-9a-f]{32}$/);
    expect(ws.status).toBe("completed");
    if (ws.action.type !== "search") throw new Error("expected a search action");
    expect(fake.log.length).toBe(before + 1);
    expect(ws.action.query).toBe(fake.log.at(-1)!.query!);
    expect(ws.action.sources!.map((s) => s.url)).toEqual(WEB_URLS);
    const msg = r.output.find((o) => o.type === "message") as OpenAI.Responses.ResponseOutputMessage;
    expect(r.output.indexOf(msg)).toBe(1);
    checkCitations(msg, WEB_URLS);
    // The first step's prompt is what input_tokens counts; the response is billed the second step's prompt too.
    const counted = await client.responses.inputTokens.count({ model: server.modelId, input: ask().input, tools: ask().tools, tool_choice: "required" });
    expect(r.usage!.input_tokens).toBeGreaterThan(2 * counted.input_tokens);
    const rid = response.headers.get("x-request-id")!;
    const rows = await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.requestId, rid)).all(), { what: `the usage row of ${rid}`, until: (r) => r.length > 0 });
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ status: "completed", inputTokens: r.usage!.input_tokens, outputTokens: r.usage!.output_tokens, endpoint: "responses" });
  });

  test("streamed: web_search_call events in order, gapless sequence numbers, annotations in the done events; the SDK helper agrees", async () => {
    fake.mode = "ok";
    const events = await rawEvents({ ...ask(), tool_choice: { type: "web_search" } });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type as string);
    expect(types.slice(0, 7)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added", "response.web_search_call.in_progress",
      "response.web_search_call.searching", "response.web_search_call.completed", "response.output_item.done",
    ]);
    expect(events[2].item).toMatchObject({ type: "web_search_call", status: "in_progress", action: { type: "search" } });
    const wsId = events[2].item.id;
    for (const e of events.slice(3, 7)) expect(e.item_id ?? e.item.id).toBe(wsId);
    expect(events[6].item.status).toBe("completed");
    expect(types[7]).toBe("response.output_item.added");
    expect(events[7].output_index).toBe(1);
    const textDone = events.find((e) => e.type === "response.output_text.done");
    const added = events.filter((e) => e.type === "response.output_text.annotation.added");
    expect(added.length).toBeGreaterThan(0);
    expect(types.indexOf("response.output_text.annotation.added")).toBeLessThan(types.indexOf("response.output_text.done"));
    expect(textDone.annotations).toEqual(added.map((e) => e.annotation));
    expect(events.find((e) => e.type === "response.content_part.done").part.annotations).toEqual(textDone.annotations);
    const last = events.at(-1);
    expect(["response.completed", "response.incomplete"]).toContain(last.type);
    expect(last.response.output[1].content[0].annotations).toEqual(textDone.annotations);
    expect(last.response.output[1].content[0].text).toBe(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join(""));

    const stream = client.responses.stream(ask());
    const seen: string[] = [];
    stream.on("response.web_search_call.completed", (e) => seen.push(e.item_id));
    const final = await stream.finalResponse();
    expect(final.output[0]!.type).toBe("web_search_call");
    expect(seen).toEqual([final.output[0]!.id!]);
    checkCitations(final.output[1] as OpenAI.Responses.ResponseOutputMessage, WEB_URLS);
  });

  test("a backend that times out, answers garbage, too much, an error status or a redirect: a failed web_search_call, and the response still completes", async () => {
    const modes: FakeMode[] = ["slow", "garbage", "huge", "huge_chunked", "status", "redirect"];
    for (const mode of modes) {
      fake.mode = mode;
      const r = await client.responses.create(ask());
      expect({ mode, status: r.status === "completed" || r.status === "incomplete", error: r.error }).toEqual({ mode, status: true, error: null });
      const ws = r.output[0] as OpenAI.Responses.ResponseFunctionWebSearch;
      expect({ mode, type: ws.type, status: ws.status }).toEqual({ mode, type: "web_search_call", status: "failed" });
      const msg = r.output.find((o) => o.type === "message") as OpenAI.Responses.ResponseOutputMessage | undefined;
      // Nothing to cite: a failed search gave no sources.
      if (msg) expect((msg.content[0] as OpenAI.Responses.ResponseOutputText).annotations).toEqual([]);
    }
  });

  test("a function tool named like the built-in tool is a 400 with param tools", async () => {
    const fn = { type: "function" as const, name: "web_search", parameters: { type: "object", properties: {} }, strict: false };
    const err = await client.responses.create({ model: server.modelId, input: "hi", tools: [{ type: "web_search" }, fn] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe("tools");
    expect(err.message).toMatch(/reserved by the web_search tool/);
  });

  test("kiln only ever requested the configured base URL", () => {
    expect(fake.log.length).toBeGreaterThan(0);
    for (const entry of fake.log) expect({ method: entry.method, path: entry.path }).toEqual({ method: "GET", path: "/searx/search" });
  });
});
