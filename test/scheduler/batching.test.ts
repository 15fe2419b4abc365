// Continuous batching through the real server: exactness inside a busy batch, joining mid-batch, stop sequences, usage rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { usage } from "../../src/db/schema.ts";
import { streamChat } from "../load/stream-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop(1000));

/** Any outcome (chat() below insists on a 200). */
async function send(body: Record<string, unknown>) {
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, temperature: 0, ...body }),
  });
  return { res, body: (await res.json()) as any };
}

/** A request that must succeed: anything but a 200 fails the test with the error it got. */
async function chat(body: Record<string, unknown>) {
  const r = await send(body);
  if (r.res.status !== 200) throw new Error(`expected 200, got ${r.res.status}: ${JSON.stringify(r.body)}`);
  return r;
}

const ask = (content: string) => [{ role: "user", content }];

describe("continuous batching", () => {
  test("greedy output is identical alone and inside a busy batch of other lengths", async () => {
    const alone = await chat({ messages: ask("Tell me about rivers"), max_tokens: 24 });
    const prompts = ["a", "a much longer prompt about mountains, valleys and the weather in spring", "short", "numbers 1 2 3 4 5 6 7 8 9"];
    const others = prompts.map((p) =>
      streamChat(s.url, s.key, { model: s.modelId, messages: ask(p), max_tokens: 600, temperature: 0.8, seed: 3, ignore_eos: true }).then((t) => ({
        ...t,
        endedAt: performance.now(),
      })),
    );
    await waitFor(() => s.runtime.scheduler.load().active >= prompts.length, { what: `the ${prompts.length} other streams in the batch` });
    const busy = await chat({ messages: ask("Tell me about rivers"), max_tokens: 24 });
    const busyEnded = performance.now();
    const done = await Promise.all(others);
    // The others were still decoding when the request finished: it really ran inside their batch.
    expect(done.every((o) => o.endedAt > busyEnded)).toBe(true);
    expect(busy.body.choices[0].message.content).toBe(alone.body.choices[0].message.content);
    expect(busy.body.usage).toEqual(alone.body.usage);
  });

  test("a request that joins mid-batch produces tokens before the running one finishes", async () => {
    const long = streamChat(s.url, s.key, { model: s.modelId, messages: ask("long"), max_tokens: 400, temperature: 0, ignore_eos: true });
    await waitFor(() => s.runtime.scheduler.load().active === 1, { what: "the long stream in the batch" });
    const t0 = performance.now();
    const short = await streamChat(s.url, s.key, { model: s.modelId, messages: ask("short"), max_tokens: 3, temperature: 0 });
    const shortDone = performance.now() - t0;
    const l = await long;
    expect(short.outputTokens).toBeGreaterThan(0);
    // The short request finished while the long one was still decoding (it did not wait for the batch to drain).
    expect(l.outputTokens).toBeGreaterThan(50);
    expect(shortDone).toBeLessThan(l.e2eMs - 100);
  });

  test("a stop sequence ends the text before it, with finish_reason stop", async () => {
    const full = await chat({ messages: ask("Write anything"), max_tokens: 40 });
    const text: string = full.body.choices[0].message.content;
    const stop = text.slice(10, 13);
    expect(stop.length).toBe(3);
    const cut = await chat({ messages: ask("Write anything"), max_tokens: 40, stop: [stop] });
    expect(cut.body.choices[0].message.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(cut.body.choices[0].finish_reason).toBe("stop");
  });

  test("max_tokens ends with finish_reason length and exactly that many tokens", async () => {
    const r = await chat({ messages: ask("Go on"), max_tokens: 5, ignore_eos: true });
    expect(r.body.choices[0].finish_reason).toBe("length");
    expect(r.body.usage.completion_tokens).toBe(5);
  });

  test("the usage row matches the response's usage", async () => {
    const r = await chat({ messages: ask("usage please"), max_tokens: 7 });
    const requestId = r.res.headers.get("x-request-id")!;
    // The row is written when the run settles, which may come just after the answer is sent.
    const rows = await waitFor(() => sqliteOf(s.deps.db).select().from(usage).where(eq(usage.requestId, requestId)).all(), { what: `the usage row of ${requestId}`, until: (r) => r.length > 0 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      model: s.modelId, endpoint: "chat", inputTokens: r.body.usage.prompt_tokens, outputTokens: r.body.usage.completion_tokens,
    });
  });

  test("a short prompt with max_tokens far past the window still gets the exact counts (the byte bound is for huge prompts)", async () => {
    const input: number = (await chat({ messages: ask("hi"), max_tokens: 1 })).body.usage.prompt_tokens;
    const r = await send({ messages: ask("hi"), max_tokens: 200_000 });
    expect(r.res.status).toBe(400);
    expect(r.body.error.message).toContain(`However, you requested ${input + 200_000} tokens (${input} in the input, 200000 in the output).`);
  });

  test("context overflow by one token gives the exact 400, counted from the tokenized prompt", async () => {
    const input: number = (await chat({ messages: ask("hi"), max_tokens: 1 })).body.usage.prompt_tokens;
    // One past the window: the byte-count bound lets it through (it is below the real count), the exact count does not.
    const output = 131_073 - input;
    const r = await send({ messages: ask("hi"), max_tokens: output });
    expect(r.res.status).toBe(400);
    expect(r.body.error).toEqual({
      message: `This model's maximum context length is 131072 tokens. However, you requested 131073 tokens (${input} in the input, ${output} in the output). Please reduce the length of the input or of the requested output.`,
      type: "invalid_request_error",
      param: null,
      code: null,
    });
  });

  test("a prompt three times the old 4,096-token window (about 12k tokens, an agent's first request) gets a real answer", async () => {
    const lines = Array.from({ length: 460 }, (_, i) => `${i}: file src/part-${i % 37}.ts exports ${["load", "save", "parse", "render"][i % 4]}Item${i % 91}.`);
    const r = await chat({ messages: ask(lines.join("\n")), max_tokens: 4 });
    expect(r.body.usage.prompt_tokens).toBeGreaterThan(11_000);
    expect(r.body.usage.prompt_tokens).toBeLessThan(13_000);
    expect(r.body.usage.completion_tokens).toBe(4);
    expect(r.body.choices[0].finish_reason).toBe("length");
    expect(r.body.choices[0].message.content.length).toBeGreaterThan(0);
  }, 180_000);

  test("tool calls round-trip: assistant tool_calls and tool results are accepted and rendered", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const plain = await chat({ messages: ask("Weather in Paris?"), tools, max_tokens: 4 });
    const messages = [
      ...ask("Weather in Paris?"),
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "18 C and sunny" },
    ];
    const r = await chat({ messages, tools, max_tokens: 4 });
    // The call and its result are in the prompt: it is longer than the question alone by at least their text.
    expect(r.body.usage.prompt_tokens).toBeGreaterThan(plain.body.usage.prompt_tokens + 10);
  });
});

describe("constrained answers", () => {
  test("response_format json_object: a length cut is a 200 with finish_reason length, never a 500", async () => {
    // No eos and no stop strings: the only way to end is the length cut, which is a success whatever the text.
    for (const seed of [1, 2]) {
      const r = await chat({ messages: ask("Give me a JSON object"), max_tokens: 4, temperature: 1, seed, ignore_eos: true, response_format: { type: "json_object" } });
      expect(r.body.choices[0].finish_reason).toBe("length");
      expect(r.body.usage.completion_tokens).toBe(4);
    }
  });

  // Constrained decoding: even random weights can only write JSON, so every finished answer parses.
  test("response_format json_object: a finished answer is one JSON object; only a length cut may be partial", async () => {
    let finished = 0;
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const r = await chat({ messages: ask("Give me a JSON object"), max_tokens: 400, temperature: 1, seed, response_format: { type: "json_object" } });
      const choice = r.body.choices[0];
      if (choice.finish_reason === "length") continue;
      expect(choice.finish_reason).toBe("stop");
      const v = JSON.parse(choice.message.content);
      expect(typeof v === "object" && v !== null && !Array.isArray(v)).toBe(true);
      finished++;
    }
    expect(finished).toBeGreaterThan(0);
  });

  test("a named tool_choice yields a parsed tool call whose arguments follow the parameters", async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { exact: { type: "boolean" } }, required: ["exact"] } } }];
    for (const seed of [1, 2, 3]) {
      const r = await chat({ messages: ask("look it up"), tools, tool_choice: { type: "function", function: { name: "lookup" } }, max_tokens: 16, temperature: 1, seed });
      expect(r.body.choices[0].finish_reason).toBe("tool_calls");
      expect(r.body.choices[0].message.tool_calls[0].function.name).toBe("lookup");
      expect(typeof JSON.parse(r.body.choices[0].message.tool_calls[0].function.arguments).exact).toBe("boolean");
    }
  });
});
