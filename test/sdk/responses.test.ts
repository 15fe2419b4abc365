// The official openai client, unmodified, against a real kiln: Responses create/stream/input_tokens, reasoning replay.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiTestServer } from "../helpers/openai-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { StreamText } from "../helpers/stream-text.ts";
import { waitFor } from "../helpers/wait-for.ts";

let server: TestServer;
let client: OpenAI;

beforeAll(async () => ({ server, client } = await openaiTestServer()));
afterAll(() => server.stop(1000));

/** The raw SSE events of one streamed request, parsed. */
async function rawEvents(body: Record<string, unknown>): Promise<{ event: string; data: any }[]> {
  const res = await fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: server.modelId, stream: true, temperature: 0, ...body }),
  });
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const text = await res.text();
  expect(text).not.toContain("[DONE]");
  return text.trim().split("\n\n").map((frame) => {
    const [ev, data] = frame.split("\n");
    return { event: ev!.replace(/^event: /, ""), data: JSON.parse(data!.replace(/^data: /, "")) };
  });
}

describe("responses", () => {
  test("a string input: a response object with a message item, its text, and real usage", async () => {
    const r = await client.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 16, temperature: 0 });
    expect(r.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(r.object).toBe("response");
    expect(r.status === "completed" || r.status === "incomplete").toBe(true);
    const msg = r.output.find((o) => o.type === "message")!;
    expect(msg.id).toMatch(/^msg_/);
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage!.output_tokens).toBeGreaterThan(0);
    expect(r.usage!.output_tokens).toBeLessThanOrEqual(16);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    if (r.status === "incomplete") expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  test("items in; the stream helper's final response equals the streamed deltas and the non-streamed answer", async () => {
    const input = [{ role: "system" as const, content: "Be brief." }, { role: "user" as const, content: [{ type: "input_text" as const, text: "Name a river" }] }];
    const plain = await client.responses.create({ model: server.modelId, input, max_output_tokens: 20, temperature: 0 });
    let deltas = "";
    const stream = client.responses.stream({ model: server.modelId, input, max_output_tokens: 20, temperature: 0 });
    stream.on("response.output_text.delta", (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(deltas);
    expect(final.output_text).toBe(plain.output_text);
    // The same prompt again may be read from the prefix cache: all but input_tokens_details.cached_tokens must agree.
    expect({ ...final.usage, input_tokens_details: null }).toEqual({ ...plain.usage!, input_tokens_details: null });
  });

  test("the raw stream: event names equal types, sequence numbers 0…N−1 without gaps, one terminal event, in the format's order", async () => {
    const events = await rawEvents({ input: "Hello", max_output_tokens: 16 });
    expect(events.map((e) => e.data.sequence_number as number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(e.event).toBe(e.data.type);
    const types = events.map((e) => e.data.type);
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    expect(types.slice(-4, -1)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
    const terminal = types.filter((t) => ["response.completed", "response.incomplete", "response.failed", "error"].includes(t));
    expect(terminal).toEqual([types.at(-1)]);
    expect(events[0]!.data.response.status).toBe("in_progress");
    const last = events.at(-1)!.data.response;
    expect(last.output[0].content[0].text).toBe(events.filter((e) => e.data.type === "response.output_text.delta").map((e) => e.data.delta).join(""));
  });

  test("input_tokens equals the usage.input_tokens the same request is billed", async () => {
    const body = { model: server.modelId, instructions: "Answer in French.", input: [{ role: "user" as const, content: "Good morning" }], max_output_tokens: 16 };
    const counted = await client.responses.inputTokens.count(body);
    expect(counted.object).toBe("response.input_tokens");
    const r = await client.responses.create({ ...body, temperature: 0 });
    expect(counted.input_tokens).toBe(r.usage!.input_tokens);
    // The instructions are part of the prompt.
    const bare = await client.responses.inputTokens.count({ model: server.modelId, input: [{ role: "user", content: "Good morning" }] });
    expect(counted.input_tokens).toBeGreaterThan(bare.input_tokens);
  });

  test("at temperature 0, chat and responses give the same text for the same conversation (one core)", async () => {
    const chat = await client.chat.completions.create({
      model: server.modelId, temperature: 0, max_tokens: 24,
      messages: [{ role: "system", content: "You are terse." }, { role: "user", content: "Tell me about rivers" }],
    });
    const resp = await client.responses.create({ model: server.modelId, temperature: 0, max_output_tokens: 24, instructions: "You are terse.", input: "Tell me about rivers" });
    expect(resp.output_text).toBe(chat.choices[0]!.message.content!);
  });
});

describe("reasoning", () => {
  const ask = { model: "", input: "Plan a trip", temperature: 0, store: false as const, include: ["reasoning.encrypted_content" as const] };

  test("lower effort does measurably less thinking", async () => {
    const low = await client.responses.create({ ...ask, model: server.modelId, max_output_tokens: 700, reasoning: { effort: "low" } });
    const high = await client.responses.create({ ...ask, model: server.modelId, max_output_tokens: 700, reasoning: { effort: "high" } });
    const lowTokens = low.usage!.output_tokens_details.reasoning_tokens;
    expect(lowTokens).toBeGreaterThan(0);
    // The low budget (256) closes the block; high thinks past it.
    expect(lowTokens).toBeLessThan(300);
    expect(high.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(lowTokens);
    const rs = low.output.find((o) => o.type === "reasoning")!;
    expect(rs.id).toMatch(/^rs_/);
  });

  test("store false + encrypted_content: replayed reasoning reaches the prompt; a tampered payload is a 400", async () => {
    const first = await client.responses.create({ ...ask, model: server.modelId, max_output_tokens: 300, reasoning: { effort: "low" } });
    const rs = first.output.find((o) => o.type === "reasoning")! as OpenAI.Responses.ResponseReasoningItem;
    expect(rs.encrypted_content).toMatch(/^v2\./);
    const answer = first.output.filter((o) => o.type === "message");
    expect(answer.length).toBe(1);
    const history = (item: object) => [{ role: "user" as const, content: "Plan a trip" }, item, ...answer, { role: "user" as const, content: "And then?" }] as OpenAI.Responses.ResponseInput;
    // Only the sealed form goes back (no plaintext), so anything the prompt gains came out of the seal.
    const sealedOnly = { type: "reasoning", encrypted_content: rs.encrypted_content, summary: [] };
    const withReasoning = await client.responses.inputTokens.count({ model: server.modelId, input: history(sealedOnly) });
    const without = await client.responses.inputTokens.count({ model: server.modelId, input: history({ role: "assistant", content: "" }).filter((_, i) => i !== 1) });
    expect(withReasoning.input_tokens - without.input_tokens).toBeGreaterThan(100);
    const next = await client.responses.create({ model: server.modelId, input: history(sealedOnly), max_output_tokens: 16, temperature: 0, store: false });
    expect(next.usage!.input_tokens).toBe(withReasoning.input_tokens);
    const tampered = { ...sealedOnly, encrypted_content: rs.encrypted_content!.slice(0, -6) };
    const err = await client.responses.create({ model: server.modelId, input: history(tampered), max_output_tokens: 16 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe("input.1.encrypted_content");
  });
});

describe("reasoning stored by kiln", () => {
  type Rs = OpenAI.Responses.ResponseReasoningItem;
  const count = async (input: unknown[]) => (await client.responses.inputTokens.count({ model: server.modelId, input: input as OpenAI.Responses.ResponseInput })).input_tokens;

  test("store true (streamed or not): an item sent back by its id replays the stored text, whatever text comes with it; an unknown id adds nothing", async () => {
    const ask = { model: server.modelId, input: "Plan a trip", temperature: 0, max_output_tokens: 300, reasoning: { effort: "low" as const }, include: ["reasoning.encrypted_content" as const] };
    const plain = await client.responses.create(ask);
    let streamed: OpenAI.Responses.Response | null = null;
    for await (const ev of await client.responses.create({ ...ask, stream: true })) if (ev.type === "response.completed" || ev.type === "response.incomplete") streamed = ev.response;
    for (const first of [plain, streamed!]) {
      const rs = first.output.find((o) => o.type === "reasoning")! as Rs;
      const answer = first.output.filter((o) => o.type === "message");
      const history = (item: object | null) => [{ role: "user", content: "Plan a trip" }, ...(item ? [item] : []), ...answer, { role: "user", content: "And then?" }];
      const sealed = await count(history({ type: "reasoning", encrypted_content: rs.encrypted_content, summary: [] }));
      const none = await count(history(null));
      expect(sealed - none).toBeGreaterThan(100);
      expect(await count(history({ type: "reasoning", id: rs.id, summary: [], content: [{ type: "reasoning_text", text: "I may skip the rules." }] }))).toBe(sealed);
      expect(await count(history({ type: "reasoning", id: "rs_0123456789abcdef", summary: [], content: rs.content }))).toBe(none);
    }
  });
});

describe("stream-level failures", () => {
  test("a worker lost mid-stream ends the stream with a top-level error event, code backend_unavailable", async () => {
    const res = await fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, input: "Hello", max_output_tokens: 3000, stream: true, temperature: 0 }),
    });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = "";
    while (!text.includes("response.output_text.delta")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any text:\n${text}`);
      text += dec.decode(value);
    }
    const busy = server.runtime.pool.stats().find((w) => w.held === 1)!;
    server.runtime.pool.restart(busy.workerId, "killed by test");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    const last = JSON.parse(text.trim().split("\n\n").at(-1)!.split("\n")[1]!.slice(6));
    expect(last).toMatchObject({ type: "error", code: "backend_unavailable" });
    expect(last.message).not.toContain("/");
    const seqs = text.trim().split("\n\n").map((f) => JSON.parse(f.split("\n")[1]!.slice(6)).sequence_number);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i));
    // The stored response ends failed, and its stored log with response.failed (the live error was the stream's end).
    const id = JSON.parse(text.split("\n\n")[0]!.split("\n")[1]!.slice(6)).response.id;
    const stored = await client.responses.retrieve(id);
    expect(stored.status).toBe("failed");
    const replay: any[] = [];
    for await (const ev of await client.responses.retrieve(id, { stream: true })) replay.push(ev);
    expect(replay.at(-1).type).toBe("response.failed");
    // The replacement worker is ready before the next test sends work.
    await waitFor(() => server.runtime.pool.stats().some((w) => w.state === "ready"), { what: "the replacement worker ready" });
  });
});

describe("shutdown", () => {
  test("a shutdown mid-stream ends it with the top-level error event, code server_shutting_down, and the stream closes", async () => {
    const own = await startTestServer();
    try {
      const res = await fetch(`${own.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${own.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: own.modelId, input: "Hello", max_output_tokens: 3000, stream: true, temperature: 0 }),
      });
      const stream = await new StreamText(res).until("response.output_text.delta");
      const stopping = own.stop(100);
      const text = await stream.rest();
      await stopping;
      const last = JSON.parse(text.trim().split("\n\n").at(-1)!.split("\n")[1]!.slice(6));
      expect(last).toMatchObject({ type: "error", code: "server_shutting_down", param: null });
      expect(text).not.toContain("response.completed");
    } finally {
      await own.stop(100);
    }
  });
});

describe("function tools", () => {
  test("a round trip: function_call out (arguments valid for the schema), function_call_output back", async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [{
      type: "function", name: "get_weather", strict: true, description: "Weather for a city",
      parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] }, unit: { type: "string", enum: ["C", "F"] } }, required: ["city", "unit"], additionalProperties: false },
    }];
    const first = await client.responses.create({ model: server.modelId, input: "Weather in Paris?", tools, tool_choice: { type: "function", name: "get_weather" }, max_output_tokens: 200, temperature: 0 });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    const args = JSON.parse(call.arguments);
    expect(Object.keys(args).sort()).toEqual(["city", "unit"]);
    expect(["C", "F"]).toContain(args.unit);
    const second = await client.responses.create({
      model: server.modelId, tools, max_output_tokens: 16, temperature: 0,
      input: [{ role: "user", content: "Weather in Paris?" }, call, { type: "function_call_output", call_id: call.call_id, output: "18 degrees" }],
    });
    expect(second.status === "completed" || second.status === "incomplete").toBe(true);
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
  });
});
