// An operator's model served by name: a Qwen3-layout folder with Qwen3's real vocabulary and chat template, imported at
// start by --model (KILN_MODEL), answers all three formats with its own template, its tool calls parsed by its
// convention (<tool_call> JSON) and its thinking split out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { join } from "node:path";
import { writeHfFolder } from "../../src/modelgen/hf-write.ts";
import { familySpec, realTokenizer } from "../helpers/real-vocab.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const tokenizer = realTokenizer("qwen3");
const spec = familySpec("qwen3", "qwen3", tokenizer);
const root = tempDir();
const source = join(root, "Qwen3-Test-0.1B");
const models = join(root, "models");
let kiln: TestServer;

beforeAll(async () => {
  writeHfFolder(spec, source, { dtype: "BF16", tokenizer });
  kiln = await startTestServer({ KILN_MODEL: source, KILN_MODELS_DIR: models, KILN_BUILTIN_MODELS: "none" }, { modelDir: join(models, "unused") });
}, 120_000);
afterAll(async () => {
  await kiln?.stop();
});

const WEATHER = { type: "function", function: { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"] } } };

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${kiln.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe("a Qwen3 folder served by --model", () => {
  test("is listed under its folder's name, owned by the operator, with tools and reasoning from its template", async () => {
    const res = await fetch(`${kiln.url}/v1/models`, { headers: { authorization: `Bearer ${kiln.key}` } });
    const list = (await res.json()) as { data: { id: string; owned_by: string; capabilities: Record<string, boolean> }[] };
    expect(list.data.map((m) => m.id)).toEqual(["qwen3-test-0.1b"]);
    expect(list.data[0]).toMatchObject({ owned_by: "operator", capabilities: { chat: true, tools: true, reasoning: true } });
  });

  test("chat prompts are the family's own template, token for token", async () => {
    const messages = [{ role: "system", content: "You are terse." }, { role: "user", content: "Hello, 世界! 🎉" }];
    const r = await post("/v1/chat/completions", { model: "qwen3-test-0.1b", messages, max_tokens: 4, reasoning_effort: "none" });
    expect(r.status).toBe(200);
    const t = new PreTrainedTokenizer(tokenizer.tokenizerJson, tokenizer.tokenizerConfig);
    const text = t.apply_chat_template(messages, { add_generation_prompt: true, tokenize: false, enable_thinking: false } as never) as unknown as string;
    expect(text).toContain("<|im_start|>assistant\n<think>\n\n</think>\n\n");
    expect(r.body.usage.prompt_tokens).toBe(t.encode(text, { add_special_tokens: false }).length);
  });

  test("a required tool call comes back as a call in chat, Responses and Messages", async () => {
    const chat = await post("/v1/chat/completions", { model: "qwen3-test-0.1b", messages: [{ role: "user", content: "Weather in Paris?" }], tools: [WEATHER], tool_choice: "required", max_tokens: 64 });
    expect(chat.status).toBe(200);
    const call = chat.body.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe("get_weather");
    expect(["Paris", "Rome"]).toContain(JSON.parse(call.function.arguments).city);
    expect(chat.body.choices[0].finish_reason).toBe("tool_calls");

    const resp = await post("/v1/responses", { model: "qwen3-test-0.1b", input: "Weather in Paris?", tools: [{ type: "function", ...WEATHER.function }], tool_choice: "required", max_output_tokens: 64 });
    expect(resp.status).toBe(200);
    const item = resp.body.output.find((o: { type: string }) => o.type === "function_call");
    expect(item).toMatchObject({ type: "function_call", name: "get_weather" });
    expect(["Paris", "Rome"]).toContain(JSON.parse(item.arguments).city);

    const msg = await post(
      "/v1/messages",
      { model: "qwen3-test-0.1b", max_tokens: 64, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [{ name: "get_weather", description: "Weather in a city", input_schema: WEATHER.function.parameters }], tool_choice: { type: "any" } },
      { "anthropic-version": "2023-06-01" },
    );
    expect(msg.status).toBe(200);
    expect(msg.body.stop_reason).toBe("tool_use");
    const use = msg.body.content.find((c: { type: string }) => c.type === "tool_use");
    expect(use).toMatchObject({ type: "tool_use", name: "get_weather" });
    expect(["Paris", "Rome"]).toContain(use.input.city);
  });
});
