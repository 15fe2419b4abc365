// A GGUF dropped into the models dir is imported at start and served: Qwen3's real vocabulary and template carried in
// the file's tokenizer.* keys (Q4_K_M, llama.cpp's usual mix), answering chat with the family's template and its calls.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PreTrainedTokenizer } from "@huggingface/transformers";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeGgufModel } from "../../src/modelgen/gguf-model.ts";
import { tokenizerGgufKv } from "../../src/modelgen/import/tokenizer-gguf-kv.ts";
import { familySpec, realTokenizer } from "../helpers/real-vocab.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const tokenizer = realTokenizer("qwen3");
// Rows of 256, so Q4_K_M's K-quants apply (llama.cpp falls back to Q5_0 / Q8_0 for other rows).
const spec = familySpec("qwen3", "qwen3", tokenizer, { hidden: 256, headDim: 64, intermediate: 512 });
const models = join(tempDir(), "models");
let kiln: TestServer;

beforeAll(async () => {
  mkdirSync(models, { recursive: true });
  await writeGgufModel(spec, "q4_k_m", join(models, "Qwen3-Test-Q4_K_M.gguf"), { tokenizerKv: tokenizerGgufKv(tokenizer.tokenizerJson, tokenizer.tokenizerConfig, spec.vocab) });
  kiln = await startTestServer({ KILN_MODELS_DIR: models, KILN_BUILTIN_MODELS: "none" }, { modelDir: join(models, "unused") });
}, 180_000);
afterAll(async () => {
  await kiln?.stop();
});

async function chat(body: Record<string, unknown>) {
  const res = await fetch(`${kiln.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3-test-q4-k-m", ...body }) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

test("the dropped file is imported once, named after the file, with its mix of types recorded", () => {
  expect(readdirSync(models).sort()).toEqual(["Qwen3-Test-Q4_K_M.gguf", "qwen3-test-q4-k-m"]);
  const manifest = JSON.parse(readFileSync(join(models, "qwen3-test-q4-k-m", "kiln.json"), "utf8"));
  expect(manifest).toMatchObject({ architecture: "qwen3", context_length: 4096, source: { format: "gguf", architecture: "qwen3", file_type: 15 } });
  expect(manifest.source.types).toMatchObject({ Q4_K: expect.any(Number), Q6_K: expect.any(Number), F32: expect.any(Number) });
  expect(kiln.logs.filter((l) => l.msg === "model imported")).toHaveLength(1);
});

test("chat prompts are the template from the file, token for token", async () => {
  const messages = [{ role: "user", content: "Bonjour 🌍, 你好" }];
  const r = await chat({ messages, max_tokens: 4, reasoning_effort: "none" });
  expect(r.status).toBe(200);
  const t = new PreTrainedTokenizer(tokenizer.tokenizerJson, tokenizer.tokenizerConfig);
  const text = t.apply_chat_template(messages, { add_generation_prompt: true, tokenize: false, enable_thinking: false } as never) as unknown as string;
  expect(r.body.usage.prompt_tokens).toBe(t.encode(text, { add_special_tokens: false }).length);
});

test("a named tool call is parsed back from the template's <tool_call> convention", async () => {
  const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string", enum: ["a", "b"] } }, required: ["q"] } } };
  const r = await chat({ messages: [{ role: "user", content: "look it up" }], tools: [tool], tool_choice: { type: "function", function: { name: "lookup" } }, max_tokens: 48 });
  expect(r.status).toBe(200);
  expect(r.body.choices[0].message.tool_calls[0].function.name).toBe("lookup");
  expect(["a", "b"]).toContain(JSON.parse(r.body.choices[0].message.tool_calls[0].function.arguments).q);
});
