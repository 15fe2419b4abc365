// Issue 40: the request shapes real clients send (Codex, the AI SDK, vLLM-style video, the Files API), each on
// fixtures written here, against a real kiln with the built-in text models.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { builtinTextModels } from "../helpers/builtin-models.ts";
import { AV } from "../helpers/media-fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { modelDir: await builtinTextModels() });
});
afterAll(() => server.stop(1000));

type Json = Record<string, any>;
const post = async (path: string, json: Json): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(json) });
  return { status: res.status, body: (await res.json()) as Json };
};
const responses = (json: Json) => post("/v1/responses", { model: "kiln-tiny-v1", max_output_tokens: 32, store: false, ...json });
const fn = (name: string) => ({ type: "function", name, strict: false, parameters: { type: "object", properties: { id: { type: "integer" } }, required: ["id"], additionalProperties: false } });

function expect400(r: { status: number; body: Json }, param: string | null, message?: RegExp): void {
  expect({ status: r.status, type: r.body.error?.type, param: r.body.error?.param }).toEqual({ status: 400, type: "invalid_request_error", param });
  if (message) expect(r.body.error.message).toMatch(message);
}

describe("Responses input errors name the item (item 2)", () => {
  test("a reasoning item with content: null replays as Codex sends it; the answer is 200", async () => {
    const user = { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] };
    const first = await responses({ input: [user], reasoning: { effort: "low", summary: "auto" }, include: ["reasoning.encrypted_content"] });
    expect(first.status).toBe(200);
    const replay = first.body.output.map((it: Json) => (it.type === "reasoning" ? { ...it, content: null } : it));
    const second = await responses({ input: [user, ...replay, { ...user, content: [{ type: "input_text", text: "turn 2" }] }], reasoning: { effort: "low", summary: "auto" } });
    expect(second.status).toBe(200);
    expect(second.body.object).toBe("response");
  });

  test("a wrong value inside an item names its path, never only `input`", async () => {
    expect400(await responses({ input: [{ role: "user", content: "hi" }, { role: "user", content: 5 }] }), "input.1.content", /^Invalid value for 'input\.1\.content': expected string, array or null\.$/);
    expect400(await responses({ input: [{ role: "user", content: [{ type: "input_text", text: 7 }] }] }), "input.0.content.0.text");
    expect400(await responses({ input: [{ role: "user", content: null }] }), "input.0.content", /input\.0 \(a message\) needs content/);
  });

  test("rule 3's refusal says which item needs which field", async () => {
    const r = await responses({
      input: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
        { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
      ],
      tools: [fn("lookup")],
    });
    expect400(r, "input.1.phase", /^input\.1 is an assistant message followed by a function_call \(input\.2\); .* needs the field phase: "commentary" \(set "phase": "commentary" on input\.1\)\.$/);
  });
});

describe("Responses tools Codex sends (items 7, 8)", () => {
  const namespace = { type: "namespace", name: "multi_agent_v1", description: "Sub-agents.", tools: [fn("close_agent"), fn("resume_agent")] };

  test("a namespace's functions are offered and callable under their own names", async () => {
    const r = await responses({ input: "close it", tools: [fn("exec_command"), namespace], tool_choice: { type: "function", name: "resume_agent" }, max_output_tokens: 64 });
    expect(r.status).toBe(200);
    const call = r.body.output.find((it: Json) => it.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "resume_agent" });
    expect(Number.isInteger(JSON.parse(call.arguments).id)).toBe(true);
    expect(r.body.tools[1]).toMatchObject({ type: "namespace", name: "multi_agent_v1" });
  });

  test("a namespace is checked like the tools it holds, each error naming its place", async () => {
    expect400(await responses({ input: "x", tools: [fn("close_agent"), namespace] }), "tools.1.tools.0.name", /declared twice/);
    expect400(await responses({ input: "x", tools: [{ ...namespace, tools: [{ type: "web_search" }] }] }), "tools.0.tools.0.type");
    expect400(await responses({ input: "x", tools: [{ type: "namespace", name: "n" }] }), "tools.0.tools");
  });

  test("web_search on a server without a search backend is not offered: 200; forcing it is an honest 400", async () => {
    const offered = await responses({ input: "hi", tools: [fn("exec_command"), { type: "web_search", external_web_access: false }] });
    expect(offered.status).toBe(200);
    expect(offered.body.output.some((it: Json) => it.type === "web_search_call")).toBe(false);
    const alone = await responses({ input: "hi", tools: [{ type: "web_search" }], tool_choice: "auto" });
    expect(alone.status).toBe(200);
    for (const tool_choice of [{ type: "web_search" }, "required"]) {
      expect400(await responses({ input: "hi", tools: [{ type: "web_search" }], tool_choice }), "tool_choice", /needs a search backend.*KILN_WEB_SEARCH_URL/);
    }
  });
});

describe("forced calls carry finite numbers (item 9)", () => {
  test("20 forced chat calls with number and integer fields all parse to finite values", async () => {
    const parameters = { type: "object", properties: { x: { type: "number" }, n: { type: "integer" }, v: { type: "array", items: { type: "number" } } }, required: ["x", "n", "v"], additionalProperties: false };
    const tools = [{ type: "function", function: { name: "measure", parameters, strict: true } }];
    let calls = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const r = await post("/v1/chat/completions", { model: "kiln-tiny-v1", seed, max_tokens: 200, tools, tool_choice: "required", messages: [{ role: "user", content: "measure" }] });
      expect(r.status).toBe(200);
      const call = r.body.choices[0].message.tool_calls?.[0];
      // A call max_tokens cut short is not a whole call; every whole one must parse to finite numbers.
      if (r.body.choices[0].finish_reason !== "tool_calls") continue;
      calls++;
      const args = JSON.parse(call.function.arguments);
      for (const value of [args.x, args.n, ...args.v]) expect(Number.isFinite(value)).toBe(true);
    }
    expect(calls).toBeGreaterThanOrEqual(10);
  }, 60_000);
});

describe("smaller mismatches (item 12)", () => {
  const upload = async (form: FormData) => {
    const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body: form });
    return { status: res.status, body: (await res.json()) as Json };
  };

  test("an upload whose file field is a text field is a 400 naming file; one without purpose a 400 naming purpose", async () => {
    let form = new FormData();
    form.append("purpose", "user_data");
    form.append("file", "just text, not a file");
    expect400(await upload(form), "file", /text field/);
    for (const before of [true, false]) {
      form = new FormData();
      if (before) form.append("note", "x");
      form.append("file", new File([new Uint8Array([1, 2, 3])], "a.bin"));
      if (!before) form.append("note", "x");
      expect400(await upload(form), "purpose", /purpose/);
    }
    const listed = await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(((await listed.json()) as Json).data).toEqual([]);
  });

  test("a chat video_url part is taken like a file part holding the same video", async () => {
    const url = `data:video/mp4;base64,${Buffer.from(await AV.mp4()).toString("base64")}`;
    const chat = (part: Json) => post("/v1/chat/completions", { model: "kiln-tiny-omni-v1", max_tokens: 4, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, part] }] });
    const asVideo = await chat({ type: "video_url", video_url: { url } });
    const asFile = await chat({ type: "file", file: { file_data: url, filename: "clip.mp4" } });
    expect(asVideo.status).toBe(200);
    expect(asFile.status).toBe(200);
    expect(asVideo.body.usage.prompt_tokens).toBe(asFile.body.usage.prompt_tokens);
    expect400(await chat({ type: "video_url", video_url: {} }), "messages.0.content.1.video_url.url");
  }, 60_000);
});
