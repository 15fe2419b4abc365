// Forced tool calls after a thinking block, through the real server on the random-weight tiny model: the model
// thinks, then the call the worker opened comes out whole and valid, in every format (Responses with each effort,
// chat's reasoning_effort, Messages' thinking budget), whole and streamed, in every seeded run. And template markup
// never reaches an answer: special tokens the model writes at random, and calls cut by the token limit, which stay
// calls in each format.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { postSampled, RUNS, seeded, sseData, sseEvents } from "../helpers/seeded.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
/** The tiny model's special tokens (`<|im_start|>`, `<think>`, `<tool_call>`, …): markup, never answer text. */
let markup: string[];
beforeAll(async () => {
  s = await startTestServer();
  const dir = s.deps.registry.list()[0]!.dir;
  markup = (JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")).added_tokens as { content: string; special: boolean }[]).filter((t) => t.special).map((t) => t.content);
});
afterAll(() => s.stop(1000));

const CITIES = ["Paris", "Rome", "Oslo"];
const WEATHER = { type: "object", properties: { city: { enum: CITIES } }, required: ["city"], additionalProperties: false };
// The reported request's room. When a call must follow, thinking gets at most half of the room: medium and high run
// with 600, so what they exercise is that cap (300 thinking tokens), not their own budgets of 1024 and 4096 (100 runs
// of 1024 thinking tokens would take minutes; the effort → budget table has its own unit test).
const MAX_TOKENS = 2048;
const EFFORTS: [string, number, number][] = [["low", MAX_TOKENS, 256], ["medium", 600, 300], ["high", 600, 300]];
/** Thinking tokens beyond the budget: the close the worker writes (`\n</think>`) is counted as reasoning. */
const CLOSE_TOKENS = 2;

const post = (path: string, body: Record<string, unknown>) => postSampled(s, path, body);

/** Null when `args` is a valid get_weather call, else why not. */
function argsProblem(args: unknown): string | null {
  try {
    const v = typeof args === "string" ? JSON.parse(args) : args;
    return v && Object.keys(v).length === 1 && CITIES.includes(v.city) ? null : `invalid arguments ${JSON.stringify(v)}`;
  } catch {
    return `arguments do not parse: ${String(args).slice(0, 80)}`;
  }
}

/** The markup any of these texts carries, or null. */
function markupIn(...texts: unknown[]): string | null {
  for (const t of texts) for (const m of markup) if (typeof t === "string" && t.includes(m)) return `markup ${m} in ${JSON.stringify(t).slice(0, 120)}`;
  return null;
}

const problems = (results: (string | null)[]) => results.filter((p) => p !== null);

describe("a forced call after thinking: valid in every seeded run", () => {
  const responsesTools = [{ type: "function", name: "get_weather", parameters: WEATHER }];
  for (const [effort, maxTokens, thinkingBound] of EFFORTS) {
    test(`Responses, effort ${effort}, max_output_tokens ${maxTokens}: at most ${thinkingBound} thinking tokens, then one valid function_call, in ${RUNS} of ${RUNS}`, async () => {
      let thought = 0;
      const results = await seeded(async (seed) => {
        const r = await post("/v1/responses", { input: "weather?", reasoning: { effort }, tools: responsesTools, tool_choice: "required", max_output_tokens: maxTokens, seed });
        if (r.status !== 200) return `seed ${seed}: ${r.status} ${r.text.slice(0, 200)}`;
        const out = r.body.output;
        // Random weights sometimes close the block at once: then there is no reasoning item, only the call.
        if (out[0]?.type === "reasoning") thought++;
        const calls = out.filter((o: any) => o.type === "function_call");
        if (r.body.status !== "completed" || calls.length !== 1 || out.at(-1) !== calls[0]) return `seed ${seed}: ${r.body.status} ${JSON.stringify(out).slice(0, 200)}`;
        const thinking = r.body.usage.output_tokens_details.reasoning_tokens;
        if (thinking > thinkingBound + CLOSE_TOKENS) return `seed ${seed}: ${thinking} thinking tokens`;
        return argsProblem(calls[0].arguments) ?? markupIn(...out.flatMap((o: any) => [o.arguments, ...(o.summary ?? []).map((p: any) => p.text), ...(o.content ?? []).map((p: any) => p.text)]));
      });
      expect(problems(results)).toEqual([]);
      expect(thought).toBeGreaterThan(RUNS * 0.9);
    }, 300_000);
  }

  test(`Responses streamed, effort low: the argument deltas join into a valid call in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/responses", { input: "weather?", reasoning: { effort: "low" }, tools: responsesTools, tool_choice: "required", max_output_tokens: MAX_TOKENS, seed, stream: true });
      const events = sseEvents(r.text);
      const last = events.at(-1);
      if (last?.type !== "response.completed") return `seed ${seed}: ended with ${JSON.stringify(last).slice(0, 200)}`;
      const args = events.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta).join("");
      const reasoning = events.filter((e) => e.type === "response.reasoning_text.delta").map((e) => e.delta).join("");
      return argsProblem(args) ?? markupIn(reasoning, args);
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);

  const chatTools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER } }];
  test(`chat, reasoning_effort low: reasoning_content, then one valid tool call, in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "weather?" }], reasoning_effort: "low", tools: chatTools, tool_choice: "required", max_tokens: MAX_TOKENS, seed });
      if (r.status !== 200) return `seed ${seed}: ${r.status} ${r.text.slice(0, 200)}`;
      const c = r.body.choices[0];
      if (c.finish_reason !== "tool_calls" || c.message.tool_calls?.length !== 1 || c.message.content !== null) return `seed ${seed}: ${JSON.stringify(c).slice(0, 200)}`;
      return argsProblem(c.message.tool_calls[0].function.arguments) ?? markupIn(c.message.content, c.message.reasoning_content);
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);

  test(`chat streamed, reasoning_effort low: the argument deltas join into a valid call in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "weather?" }], reasoning_effort: "low", tools: chatTools, tool_choice: "required", max_tokens: MAX_TOKENS, seed, stream: true });
      const chunks = sseData(r.text);
      const finish = chunks.map((c) => c.choices?.[0]?.finish_reason).find(Boolean);
      const args = chunks.map((c) => c.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "").join("");
      const reasoning = chunks.map((c) => c.choices?.[0]?.delta?.reasoning_content ?? "").join("");
      if (finish !== "tool_calls") return `seed ${seed}: finished ${finish}`;
      return argsProblem(args) ?? markupIn(reasoning, args);
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);

  // The format's least budget is 1024; under max_tokens 1100 the call's room caps the thinking at 550.
  const messagesBody = { max_tokens: 1100, thinking: { type: "enabled", budget_tokens: 1024 }, tools: [{ name: "get_weather", input_schema: WEATHER }], tool_choice: { type: "any" }, messages: [{ role: "user", content: "weather?" }] };
  // Messages has no seed: these are 100 unseeded runs.
  test(`Messages, thinking with a budget: a signed thinking block, then one valid tool_use, in ${RUNS} of ${RUNS} runs`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/messages", messagesBody);
      if (r.status !== 200) return `run ${seed}: ${r.status} ${r.text.slice(0, 200)}`;
      const content = r.body.content;
      const use = content.at(-1);
      const thinking = content.length === 2 ? content[0] : { type: "thinking", thinking: "", signature: "none written" };
      if (r.body.stop_reason !== "tool_use" || content.length > 2 || thinking.type !== "thinking" || !thinking.signature || use?.type !== "tool_use") return `run ${seed}: ${JSON.stringify(r.body).slice(0, 200)}`;
      return argsProblem(use.input) ?? markupIn(thinking.thinking);
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);

  test(`Messages streamed: the input_json_delta buffer is a valid call in ${RUNS} of ${RUNS} runs`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/messages", { ...messagesBody, stream: true });
      const events = sseEvents(r.text);
      const stop = events.find((e) => e.type === "message_delta")?.delta?.stop_reason;
      const json = events.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json).join("");
      const thinking = events.filter((e) => e.delta?.type === "thinking_delta").map((e) => e.delta.thinking).join("");
      if (stop !== "tool_use") return `run ${seed}: stop ${stop}`;
      return argsProblem(json) ?? markupIn(thinking);
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);
});

describe("calls cut by the token limit stay calls, and markup never reaches an answer", () => {
  // A free string: random weights often write a long one, so 12 tokens cut most calls inside their arguments; a
  // run whose string closed in time is a whole call, checked as such. Each format's runs are compared whole and
  // streamed (same seed, same tokens).
  const FREE = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
  const CUT = 12;
  const SEEDS = 32;
  const startsArgs = (args: string) => (/^\{\s*"city"/.test(args) ? null : `arguments ${JSON.stringify(args)} are not the call's beginning`);
  const enoughCut = (cut: number) => expect(cut).toBeGreaterThan(SEEDS / 4);

  test("chat: tool_calls with the partial arguments and finish_reason length, whole and streamed", async () => {
    const body = { messages: [{ role: "user", content: "weather?" }], tools: [{ type: "function", function: { name: "get_weather", parameters: FREE } }], tool_choice: "required", max_tokens: CUT };
    let cut = 0;
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { ...body, seed });
      const c = r.body.choices[0];
      const call = c.message.tool_calls?.[0]?.function;
      if (c.message.content !== null || c.message.tool_calls?.length !== 1) return `seed ${seed}: ${JSON.stringify(c).slice(0, 200)}`;
      if (c.finish_reason === "length") cut++;
      else if (c.finish_reason !== "tool_calls" || typeof JSON.parse(call.arguments).city !== "string") return `seed ${seed}: ${JSON.stringify(c).slice(0, 200)}`;
      const streamed = sseData((await post("/v1/chat/completions", { ...body, seed, stream: true })).text);
      const args = streamed.map((x) => x.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "").join("");
      const content = streamed.map((x) => x.choices?.[0]?.delta?.content ?? "").join("");
      const finish = streamed.map((x) => x.choices?.[0]?.finish_reason).find(Boolean);
      if (args !== call.arguments || content || finish !== c.finish_reason) return `seed ${seed}: streamed ${finish} ${JSON.stringify(args)} ${JSON.stringify(content)}`;
      return startsArgs(args) ?? markupIn(args);
    }, SEEDS);
    expect(problems(results)).toEqual([]);
    enoughCut(cut);
  }, 300_000);

  test("Responses: a cut call is a function_call item with status incomplete in an incomplete response, whole and streamed", async () => {
    const body = { input: "weather?", tools: [{ type: "function", name: "get_weather", parameters: FREE }], tool_choice: "required", max_output_tokens: 16 };
    let cut = 0;
    const results = await seeded(async (seed) => {
      const r = await post("/v1/responses", { ...body, seed });
      const out = r.body.output;
      if (out.length !== 1 || out[0].type !== "function_call") return `seed ${seed}: ${r.body.status} ${JSON.stringify(out).slice(0, 200)}`;
      const incomplete = r.body.status === "incomplete";
      if (incomplete) cut++;
      const expected = incomplete ? ["incomplete", "max_output_tokens", "incomplete"] : ["completed", undefined, "completed"];
      if (JSON.stringify([r.body.status, r.body.incomplete_details?.reason, out[0].status]) !== JSON.stringify(expected)) return `seed ${seed}: ${r.body.status} ${JSON.stringify(out).slice(0, 200)}`;
      const events = sseEvents((await post("/v1/responses", { ...body, seed, stream: true })).text);
      const done = events.find((e) => e.type === "response.output_item.done")?.item;
      if (events.at(-1)?.type !== `response.${r.body.status}` || done?.status !== out[0].status || done.arguments !== out[0].arguments) return `seed ${seed}: streamed ${JSON.stringify(done).slice(0, 200)}`;
      return startsArgs(out[0].arguments) ?? markupIn(out[0].arguments);
    }, SEEDS);
    expect(problems(results)).toEqual([]);
    enoughCut(cut);
  }, 300_000);

  test("Messages: a cut tool_use's input is the object its arguments began, stop_reason max_tokens, whole and streamed", async () => {
    const body = { max_tokens: CUT, tools: [{ name: "get_weather", input_schema: FREE }], tool_choice: { type: "any" }, messages: [{ role: "user", content: "weather?" }] };
    const stops: string[] = [];
    const check = (stop: unknown, content: any[], json: string | null): string | null => {
      if (stop !== "max_tokens" && stop !== "tool_use") return `stop ${String(stop)}`;
      stops.push(String(stop));
      if (content.length !== 1 || content[0].type !== "tool_use" || typeof content[0].input?.city !== "string") return JSON.stringify(content).slice(0, 200);
      if (json !== null && JSON.stringify(JSON.parse(json)) !== JSON.stringify(content[0].input)) return `the streamed buffer ${json} is not the input`;
      return markupIn(content[0].input.city);
    };
    const results = await seeded(async () => {
      const r = await post("/v1/messages", body);
      const whole = check(r.body.stop_reason, r.body.content, null);
      const events = sseEvents((await post("/v1/messages", { ...body, stream: true })).text);
      const json = events.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json).join("");
      const input = events.find((e) => e.type === "content_block_start")?.content_block;
      const streamed = check(events.find((e) => e.type === "message_delta")?.delta?.stop_reason, [{ ...input, input: JSON.parse(json) }], json);
      return whole ?? streamed;
    }, SEEDS);
    expect(problems(results)).toEqual([]);
    enoughCut(stops.filter((x) => x === "max_tokens").length / 2);
  }, 300_000);

  test("free answers with tools and thinking on: no text, reasoning or arguments carry a special token, whatever the model writes", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: FREE } }];
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "weather?" }], reasoning_effort: "low", tools, max_tokens: 400, seed });
      // A model that ends its turn inside a call gets a 500: what it wrote is not shown at all.
      if (r.status === 500) return null;
      const m = r.body.choices[0].message;
      return markupIn(m.content, m.reasoning_content, ...(m.tool_calls ?? []).map((c: any) => c.function.arguments));
    });
    expect(problems(results)).toEqual([]);
  }, 300_000);
});
