// parallel_tool_calls: false through the real server on the random-weight tiny model. Left to itself it rarely
// calls a tool, so a logit bias on the tool-call open marker makes it open call after call: with parallel calls on,
// runs write several; off, every run ends after its first call. Forced calls (`required` among two tools) are one
// call in every format.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { postSampled, seeded, sseData } from "../helpers/seeded.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const SEEDS = 20;
let s: TestServer;
/** The tiny model's `<tool_call>` id. */
let openId: number;
beforeAll(async () => {
  s = await startTestServer();
  const dir = s.deps.registry.list()[0]!.dir;
  openId = (JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")).added_tokens as { id: number; content: string }[]).find((t) => t.content === "<tool_call>")!.id;
});
afterAll(() => s.stop(1000));

const schema = (prop: string, values: string[]) => ({ type: "object", properties: { [prop]: { enum: values } }, required: [prop], additionalProperties: false });
// Strict, so the calls the model opens are held to the schemas and come out whole.
const CHAT_TOOLS = [
  { type: "function", function: { name: "get_weather", strict: true, parameters: schema("city", ["Paris", "Oslo"]) } },
  { type: "function", function: { name: "get_time", strict: true, parameters: schema("zone", ["UTC", "CET"]) } },
];
const post = (path: string, body: Record<string, unknown>) => postSampled(s, path, body);

describe("calls the model opens itself (chat, tool_choice auto)", () => {
  const run = (parallel: boolean, stream = false) =>
    seeded(async (seed) => {
      const body = { messages: [{ role: "user", content: "go" }], tools: CHAT_TOOLS, logit_bias: { [openId]: 8 }, max_tokens: 200, seed, parallel_tool_calls: parallel, stream };
      const r = await post("/v1/chat/completions", body);
      if (r.status !== 200) throw new Error(`seed ${seed}: ${r.status} ${r.text}`);
      if (!stream) return { calls: r.body.choices[0].message.tool_calls?.length ?? 0, finish: r.body.choices[0].finish_reason as string };
      const chunks = sseData(r.text);
      const indexes = new Set(chunks.flatMap((c) => (c.choices?.[0]?.delta?.tool_calls ?? []).map((t: { index: number }) => t.index)));
      return { calls: indexes.size, finish: chunks.map((c) => c.choices?.[0]?.finish_reason).find(Boolean) as string };
    }, SEEDS);

  test(`parallel calls on: the model writes several calls in a turn (some of ${SEEDS} runs)`, async () => {
    const results = await run(true);
    expect(results.filter((r) => r.calls >= 2).length).toBeGreaterThan(0);
  }, 300_000);

  test(`parallel_tool_calls false: at most one call in every one of ${SEEDS} runs, whole and streamed; a call ends the turn`, async () => {
    for (const stream of [false, true]) {
      const results = await run(false, stream);
      expect(results.filter((r) => r.calls > 1)).toEqual([]);
      expect(results.filter((r) => r.calls === 1 && r.finish !== "tool_calls")).toEqual([]);
      expect(results.filter((r) => r.calls === 1).length).toBeGreaterThan(SEEDS / 2);
    }
  }, 300_000);
});

describe("a forced call among two tools, parallel calls off, in every format", () => {
  const tools = { get_weather: schema("city", ["Paris", "Oslo"]), get_time: schema("zone", ["UTC", "CET"]) };
  const formats: [string, string, (seed: number) => Record<string, unknown>, (r: { body: any }) => { names: string[]; finish: string }][] = [
    [
      "chat",
      "/v1/chat/completions",
      (seed) => ({ messages: [{ role: "user", content: "go" }], tools: CHAT_TOOLS, tool_choice: "required", parallel_tool_calls: false, max_tokens: 300, seed }),
      (r) => ({ names: (r.body.choices[0].message.tool_calls ?? []).map((c: any) => c.function.name), finish: r.body.choices[0].finish_reason }),
    ],
    [
      "Responses",
      "/v1/responses",
      (seed) => ({ input: "go", tools: Object.entries(tools).map(([name, parameters]) => ({ type: "function", name, parameters, strict: true })), tool_choice: "required", parallel_tool_calls: false, max_output_tokens: 300, seed, store: false }),
      (r) => ({ names: r.body.output.filter((i: any) => i.type === "function_call").map((i: any) => i.name), finish: `${r.body.status} ${r.body.parallel_tool_calls}` }),
    ],
    [
      "Messages",
      "/v1/messages",
      () => ({ messages: [{ role: "user", content: "go" }], tools: Object.entries(tools).map(([name, input_schema]) => ({ name, input_schema })), tool_choice: { type: "any", disable_parallel_tool_use: true }, max_tokens: 300 }),
      (r) => ({ names: r.body.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.name), finish: r.body.stop_reason }),
    ],
  ];
  const finishes: Record<string, string> = { chat: "tool_calls", Responses: "completed false", Messages: "tool_use" };
  for (const [name, path, body, read] of formats) {
    test(`${name}: exactly one call to one of the tools in ${SEEDS} of ${SEEDS} runs`, async () => {
      const results = await seeded(async (seed) => {
        const r = await post(path, body(seed));
        return r.status === 200 ? read(r) : { names: [], finish: `${r.status} ${r.text.slice(0, 200)}` };
      }, SEEDS);
      expect(results.filter((r) => r.names.length !== 1 || !(r.names[0]! in tools) || r.finish !== finishes[name])).toEqual([]);
    }, 300_000);
  }
});
