// Constrained decoding through the real server on the random-weight tiny model: forced tool calls (one tool,
// a named tool among three, `required` among three) and strict json_schema answers are valid in every seeded run,
// whole or streamed, in chat and Responses; strict schemas kiln cannot enforce are 400s naming the keyword.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { postSampled, RUNS, seeded, sseData } from "../helpers/seeded.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { schemaViolation } from "../unit/workers/grammar/subset-validator.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop(1000));

type Schema = Record<string, unknown>;
const obj = (properties: Schema): Schema => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });

const WEATHER = obj({ city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } });
const TOOLS: Record<string, Schema> = {
  get_weather: WEATHER,
  add: obj({ a: { type: "number" }, b: { type: "number" } }),
  set_alarm: obj({ minute: { type: "integer" }, repeat: { type: ["boolean", "null"] } }),
};
// Object in array in object, an enum, a $ref and a nullable. Free strings are left to get_weather's city: random
// weights close a string only after ~100 tokens, which is all the time these runs take.
const NESTED: Schema = {
  $defs: { tag: obj({ kind: { enum: ["red", "green", "blue"] }, weight: { type: ["integer", "null"] } }) },
  ...obj({ size: { enum: ["small", "large"] }, groups: { type: "array", items: obj({ tag: { $ref: "#/$defs/tag" }, ok: { type: "boolean" } }) } }),
};

// Random weights write long strings; the room keeps a length cut out of every seeded run.
const MAX_TOKENS = 1500;
const chatTools = (names: string[]) => names.map((name) => ({ type: "function", function: { name, parameters: TOOLS[name] } }));

const post = (path: string, body: Schema) => postSampled(s, path, body);

/** Null when the call's arguments parse and validate against its tool's schema, else why not. */
function callProblem(name: string, args: string): string | null {
  if (!TOOLS[name]) return `unknown tool ${name}`;
  try {
    return schemaViolation(TOOLS[name]!, JSON.parse(args));
  } catch (e) {
    return `arguments do not parse: ${String(e)}: ${args.slice(0, 80)}`;
  }
}

describe("forced tool calls", () => {
  const cases: [string, string[], unknown][] = [
    ["required with one tool", ["get_weather"], "required"],
    ["a named tool among three", ["get_weather", "add", "set_alarm"], { type: "function", function: { name: "set_alarm" } }],
    ["required among three", ["get_weather", "add", "set_alarm"], "required"],
  ];
  for (const [what, names, choice] of cases) {
    test(`chat, ${what}: valid arguments in ${RUNS} of ${RUNS} seeded runs`, async () => {
      const results = await seeded(async (seed) => {
        const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "go" }], tools: chatTools(names), tool_choice: choice, max_tokens: MAX_TOKENS, seed });
        if (r.status !== 200) return `seed ${seed}: ${r.status} ${r.text}`;
        const c = r.body.choices[0];
        const call = c.message.tool_calls?.[0]?.function;
        if (c.finish_reason !== "tool_calls" || c.message.tool_calls.length !== 1) return `seed ${seed}: ${JSON.stringify(c).slice(0, 200)}`;
        if (typeof choice === "object" && call.name !== "set_alarm") return `seed ${seed}: called ${call.name}`;
        return callProblem(call.name, call.arguments);
      });
      expect(results.filter((p) => p !== null)).toEqual([]);
    }, 300_000);
  }

  test(`chat streamed, required with one tool: the argument deltas join into valid arguments in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "go" }], tools: chatTools(["get_weather"]), tool_choice: "required", max_tokens: MAX_TOKENS, seed, stream: true });
      const chunks = sseData(r.text);
      const args = chunks.map((c) => c.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "").join("");
      const finish = chunks.map((c) => c.choices?.[0]?.finish_reason).find(Boolean);
      return finish === "tool_calls" ? callProblem("get_weather", args) : `seed ${seed}: finished ${finish}`;
    });
    expect(results.filter((p) => p !== null)).toEqual([]);
  }, 300_000);

  for (const [what, names, choice] of [cases[0]!, [cases[1]![0], cases[1]![1], { type: "function", name: "set_alarm" }] as const]) {
    test(`responses, ${what}: valid function_call arguments in ${RUNS} of ${RUNS}`, async () => {
      const tools = names.map((name) => ({ type: "function", name, parameters: TOOLS[name] }));
      const results = await seeded(async (seed) => {
        const r = await post("/v1/responses", { input: "go", tools, tool_choice: choice, max_output_tokens: MAX_TOKENS, seed });
        if (r.status !== 200) return `seed ${seed}: ${r.status} ${r.text}`;
        const calls = r.body.output.filter((o: any) => o.type === "function_call");
        if (r.body.status !== "completed" || calls.length !== 1) return `seed ${seed}: ${JSON.stringify(r.body.output).slice(0, 200)}`;
        return callProblem(calls[0].name, calls[0].arguments);
      });
      expect(results.filter((p) => p !== null)).toEqual([]);
    }, 300_000);
  }
});

describe("unforced calls of strict tools", () => {
  test("tool_choice auto: every call the model opens by itself is whole and valid", async () => {
    const tools = ["get_weather", "add"].map((name) => ({ type: "function", function: { name, strict: true, parameters: TOOLS[name] } }));
    let calls = 0;
    // Seeds among 1..100 where random weights open a call by themselves (15 and 84 are cut inside theirs), and others.
    const seeds = [11, 56, 63, 73, 76, 79, 97, 15, 84, 1, 2, 3, 4, 5, 6, 7];
    const results = await Promise.all(seeds.map(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "go" }], tools, max_tokens: 300, seed });
      if (r.status !== 200) return `seed ${seed}: ${r.status} ${r.text.slice(0, 200)}`;
      const m = r.body.choices[0].message;
      if (m.content?.includes("<tool_call>")) return `seed ${seed}: markup in ${JSON.stringify(m.content).slice(0, 200)}`;
      const cut = r.body.choices[0].finish_reason === "length";
      for (const [i, c] of (m.tool_calls ?? []).entries()) {
        calls++;
        // Only the last call of a max_tokens cut may be unfinished (it comes back as a call with its beginning).
        if (cut && i === m.tool_calls.length - 1) continue;
        const p = callProblem(c.function.name, c.function.arguments);
        if (p) return `seed ${seed}: ${p}`;
      }
      return null;
    }));
    expect(results.filter((p) => p !== null)).toEqual([]);
    // Random weights open calls now and then on their own; these seeds do (so the check above checked something).
    expect(calls).toBeGreaterThan(0);
  }, 300_000);
});

describe("json_schema strict", () => {
  const format = { type: "json_schema", json_schema: { name: "nested", strict: true, schema: NESTED } };
  const check = (text: string) => {
    try {
      return schemaViolation(NESTED, JSON.parse(text));
    } catch {
      return `does not parse: ${text.slice(0, 80)}`;
    }
  };

  test(`a nested schema (object in array in object, enum, $ref): valid instances in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "describe" }], response_format: format, max_tokens: MAX_TOKENS, seed });
      if (r.status !== 200 || r.body.choices[0].finish_reason !== "stop") return `seed ${seed}: ${r.status} ${r.text.slice(0, 200)}`;
      return check(r.body.choices[0].message.content);
    });
    expect(results.filter((p) => p !== null)).toEqual([]);
  }, 300_000);

  test(`streamed: the content deltas join into valid instances in ${RUNS} of ${RUNS}`, async () => {
    const results = await seeded(async (seed) => {
      const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "describe" }], response_format: format, max_tokens: MAX_TOKENS, seed, stream: true });
      const chunks = sseData(r.text);
      const finish = chunks.map((c) => c.choices?.[0]?.finish_reason).find(Boolean);
      return finish === "stop" ? check(chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("")) : `seed ${seed}: finished ${finish}`;
    });
    expect(results.filter((p) => p !== null)).toEqual([]);
  }, 300_000);

  test("Responses text.format: the output text is a valid instance", async () => {
    for (const seed of [1, 2, 3]) {
      const r = await post("/v1/responses", { input: "describe", text: { format: { type: "json_schema", name: "nested", strict: true, schema: NESTED } }, max_output_tokens: MAX_TOKENS, seed });
      expect(r.status).toBe(200);
      const msg = r.body.output.find((o: any) => o.type === "message");
      expect(check(msg.content[0].text)).toBeNull();
    }
  }, 60_000);

  test("a cut by max_tokens inside the JSON is a 200 with finish_reason length", async () => {
    const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "describe" }], response_format: format, max_tokens: 3, seed: 1 });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].finish_reason).toBe("length");
    const call = await post("/v1/chat/completions", { messages: [{ role: "user", content: "go" }], tools: chatTools(["get_weather"]), tool_choice: "required", max_tokens: 3, seed: 1 });
    expect(call.status).toBe(200);
    expect(call.body.choices[0].finish_reason).toBe("length");
  });
});

describe("strict schemas outside the subset", () => {
  const bad = obj({ code: { type: "string", pattern: "^[A-Z]+$" } });
  const cases: [string, string, Schema, string][] = [
    ["chat response_format", "/v1/chat/completions", { messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "n", strict: true, schema: bad } } }, "response_format.json_schema.schema"],
    ["chat tool", "/v1/chat/completions", { messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "f", strict: true, parameters: bad } }] }, "tools.0.function.parameters"],
    ["responses text.format", "/v1/responses", { input: "x", text: { format: { type: "json_schema", name: "n", strict: true, schema: bad } } }, "text.format.schema"],
    ["responses tool", "/v1/responses", { input: "x", tools: [{ type: "function", name: "f", strict: true, parameters: bad }] }, "tools.0.parameters"],
  ];
  for (const [what, path, body, param] of cases) {
    test(`${what}: 400 naming the keyword`, async () => {
      const r = await post(path, body);
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe(param);
      expect(r.body.error.message).toContain('"pattern"');
    });
  }

  test("without strict the same schema is served (the answer is then only some JSON object)", async () => {
    const r = await post("/v1/chat/completions", { messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "n", schema: bad } }, max_tokens: MAX_TOKENS, seed: 1 });
    expect(r.status).toBe(200);
    const v = JSON.parse(r.body.choices[0].message.content);
    expect(typeof v === "object" && v !== null && !Array.isArray(v)).toBe(true);
  });
});
