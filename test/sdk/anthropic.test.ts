// The official @anthropic-ai/sdk client, unmodified, against a real kiln: Messages create/stream/count_tokens, thinking, errors.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { StreamText } from "../helpers/stream-text.ts";

let server: TestServer;
let client: Anthropic;

beforeAll(async () => {
  server = await startTestServer();
  client = new Anthropic({ apiKey: server.key, baseURL: server.url, maxRetries: 0 });
});
afterAll(() => server.stop(1000));

const user = (text: string) => [{ role: "user" as const, content: text }];
/** The whole prompt: Anthropic's input_tokens leaves out what was read from (or written to) the prefix cache. */
const promptTokens = (u: Anthropic.Usage) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
/** Greedy decoding; this SDK version's types no longer list temperature, but the format (and kiln) take it. */
const greedy = { temperature: 0 } as object;

async function raw(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": server.key, "anthropic-version": "2023-06-01", "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function frames(text: string): { event: string; data: any }[] {
  return text.trim().split("\n\n").map((f) => {
    const [ev, data] = f.split("\n");
    return { event: ev!.replace(/^event: /, ""), data: JSON.parse(data!.replace(/^data: /, "")) };
  });
}

describe("messages", () => {
  test("create, with and without system: msg_ id, text block, stop reason, usage; the system prompt costs input tokens", async () => {
    const plain = await client.messages.create({ model: server.modelId, max_tokens: 12, messages: user("Hello"), ...greedy });
    expect(plain.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(plain.type).toBe("message");
    expect(plain.role).toBe("assistant");
    expect(plain.content[0]!.type).toBe("text");
    expect(["end_turn", "max_tokens", "stop_sequence"]).toContain(plain.stop_reason!);
    expect(plain.usage.output_tokens).toBeGreaterThan(0);
    expect(plain.usage.output_tokens).toBeLessThanOrEqual(12);
    const withSystem = await client.messages.create({ model: server.modelId, max_tokens: 12, system: "You are a pirate.", messages: user("Hello"), ...greedy });
    expect(promptTokens(withSystem.usage)).toBeGreaterThan(promptTokens(plain.usage));
  });

  test("messages.stream's finalMessage equals the non-streamed answer; the raw wire names each event after its type, in order", async () => {
    const body = { model: server.modelId, max_tokens: 16, messages: user("Tell me a story"), ...greedy };
    const plain = await client.messages.create(body);
    const streamed = await client.messages.stream(body).finalMessage();
    expect(JSON.stringify(streamed.content)).toBe(JSON.stringify(plain.content));
    // The same prompt again may be read from the prefix cache: the whole prompt and the output are what must agree.
    expect([promptTokens(streamed.usage), streamed.usage.output_tokens]).toEqual([promptTokens(plain.usage), plain.usage.output_tokens]);
    expect(streamed.stop_reason).toBe(plain.stop_reason);
    const res = await raw({ ...body, stream: true });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const evs = frames(await res.text());
    for (const e of evs) expect(e.event).toBe(e.data.type);
    const types = evs.map((e) => e.data.type).filter((t) => t !== "ping");
    expect(types[0]).toBe("message_start");
    expect(types[1]).toBe("content_block_start");
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(new Set(types.slice(2, -3))).toEqual(new Set(["content_block_delta"]));
    expect(evs.at(-2)!.data.usage.output_tokens).toBe(plain.usage.output_tokens);
  });

  test("count_tokens equals the prompt the same request reports (input_tokens plus cache reads)", async () => {
    const body = { model: server.modelId, system: "Be brief.", messages: [...user("One"), { role: "assistant" as const, content: "Two" }, ...user("Three")] };
    const counted = await client.messages.countTokens(body);
    const r = await client.messages.create({ ...body, max_tokens: 8, ...greedy });
    expect(counted.input_tokens).toBe(promptTokens(r.usage));
  });

  test("thinking gives signed thinking blocks; replaying them is accepted, tampering is a 400 naming the block", async () => {
    const r = await client.messages.create({ model: server.modelId, max_tokens: 1200, thinking: { type: "enabled", budget_tokens: 1024 }, messages: user("Think first"), ...greedy });
    const thinking = r.content.find((b) => b.type === "thinking") as Anthropic.ThinkingBlock;
    expect(thinking.thinking.length).toBeGreaterThan(0);
    expect(thinking.signature.length).toBeGreaterThan(20);
    const again = (block: object) =>
      client.messages.create({
        model: server.modelId, max_tokens: 8, ...greedy,
        messages: [...user("Think first"), { role: "assistant", content: [block as Anthropic.ThinkingBlockParam, { type: "text", text: "Done." }] }, ...user("And?")],
      });
    expect((await again(thinking)).type).toBe("message");
    const err = await again({ ...thinking, thinking: `${thinking.thinking} (edited)` }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error.param).toBe("messages.1.content.0.signature");
  });

  test("thinking rules of the format: budget at least 1024 and below max_tokens", async () => {
    for (const thinking of [{ type: "enabled", budget_tokens: 1000 }, { type: "enabled", budget_tokens: 4000 }] as const) {
      const err = await client.messages.create({ model: server.modelId, max_tokens: 2000, thinking, messages: user("x") }).catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error.error.param).toBe("thinking.budget_tokens");
    }
  });

  test("a final assistant message is a prefill the answer continues", async () => {
    const r = await client.messages.create({ model: server.modelId, max_tokens: 8, ...greedy, messages: [...user("Count"), { role: "assistant", content: "One, two," }] });
    expect(r.content[0]!.type).toBe("text");
    expect((r.content[0] as Anthropic.TextBlock).text.startsWith("One, two,")).toBe(false);
  });
});

describe("errors on /v1/messages carry type: error at the top level", () => {
  test("missing max_tokens: the SDK's BadRequestError, and the raw body", async () => {
    const err = await client.messages.create({ model: server.modelId, messages: user("x") } as never).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const res = await raw({ model: server.modelId, messages: user("x") });
    expect(await res.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "Missing required parameter: 'max_tokens'.", param: "max_tokens", code: null } });
  });

  test("unknown model: NotFoundError with code model_not_found", async () => {
    const err = await client.messages.create({ model: "nope-v9", max_tokens: 4, messages: user("x") }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toMatchObject({ type: "error", error: { code: "model_not_found" } });
  });

  test("every status on this route has the envelope: 400 (bad JSON, bad roles), 401, 404, and auth by Bearer too", async () => {
    const cases: [Response, number][] = [
      [await raw("{nope" as never), 400],
      [await raw({ model: server.modelId, max_tokens: 4, messages: [{ role: "assistant", content: "x" }] }), 400],
      [await raw({ model: server.modelId, max_tokens: 4, messages: user("x") }, { "x-api-key": "LLM|1|wrong" }), 401],
      [await raw({ model: "nope-v9", max_tokens: 4, messages: user("x") }), 404],
      [await raw({ model: server.modelId, max_tokens: 4, messages: user("x"), temperature: 5 }), 400],
    ];
    for (const [res, status] of cases) {
      expect(res.status).toBe(status);
      const body = (await res.json()) as any;
      expect(body.type).toBe("error");
      expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
    }
    const bearer = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, max_tokens: 4, messages: user("x") }),
    });
    expect(bearer.status).toBe(200);
  });

  test("a roles violation names the param", async () => {
    const res = await raw({ model: server.modelId, max_tokens: 4, messages: [...user("a"), { role: "system", content: "b" }] });
    expect(((await res.json()) as any).error.param).toBe("messages.1.role");
  });
});

describe("stream-level failure", () => {
  test("SIGTERM-style shutdown mid-stream ends it with an error event (server_shutting_down)", async () => {
    const own = await startTestServer();
    try {
      const res = await fetch(`${own.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": own.key, "content-type": "application/json" },
        body: JSON.stringify({ model: own.modelId, max_tokens: 3000, messages: user("Hello"), stream: true, temperature: 0 }),
      });
      const stream = await new StreamText(res).until("content_block_delta");
      const stopping = own.stop(100);
      const text = await stream.rest();
      await stopping;
      const last = frames(text).at(-1)!;
      expect(last.event).toBe("error");
      expect(last.data).toMatchObject({ type: "error", error: { code: "server_shutting_down" } });
    } finally {
      await own.stop(100);
    }
  });
});

describe("tools", () => {
  test("a tool_use round trip: tool_use out (input valid for the schema), tool_result back", async () => {
    const tools: Anthropic.Tool[] = [{
      name: "get_weather", description: "Weather for a city",
      input_schema: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"], additionalProperties: false },
    }];
    const first = await client.messages.create({ model: server.modelId, max_tokens: 200, tools, tool_choice: { type: "tool", name: "get_weather" }, messages: user("Weather in Paris?"), ...greedy });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.id).toMatch(/^toolu_/);
    // Random weights: the schema's enum keeps the constrained answer short and checkable.
    expect(["Paris", "Rome"]).toContain((use.input as { city: string }).city);
    const second = await client.messages.create({
      model: server.modelId, max_tokens: 16, tools, ...greedy,
      messages: [...user("Weather in Paris?"), { role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "18 degrees" }] }],
    });
    expect(second.type).toBe("message");
    expect(promptTokens(second.usage)).toBeGreaterThan(promptTokens(first.usage));
  });
});

test("tool_choice any among several tools calls one of them, with input valid for that tool", async () => {
  const tools: Anthropic.Tool[] = ["alpha", "beta", "gamma"].map((name) => ({
    name, input_schema: { type: "object", properties: { [`${name}_arg`]: { type: "string", enum: ["x", "y"] } }, required: [`${name}_arg`], additionalProperties: false },
  }));
  const r = await client.messages.create({ model: server.modelId, max_tokens: 200, tools, tool_choice: { type: "any" }, messages: user("Pick one"), ...greedy });
  const use = r.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
  expect(["alpha", "beta", "gamma"]).toContain(use.name);
  expect(Object.keys(use.input as object)).toEqual([`${use.name}_arg`]);
});
