// POST /v1/completions through the official openai client against a real kiln on the tiny model: the legacy format's
// prompt shapes, n per prompt, echo, stop, logprobs and usage, whole and streamed, with the values checked (a greedy
// token's logprob is the largest of its top list; the stream spells the whole answer) and the usage row written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import OpenAI from "openai";
import { usage } from "../../src/db/schema.ts";
import { sqliteOf } from "../helpers/databases.ts";
import { openaiTestServer } from "../helpers/openai-server.ts";
import type { TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let server: TestServer;
let client: OpenAI;
beforeAll(async () => ({ server, client } = await openaiTestServer()));
afterAll(() => server.stop(1000));

const PROMPT = "The river carried sand to the";
const greedy = { temperature: 0, max_tokens: 8 };

describe("completions.create", () => {
  test("a string prompt: text_completion with usage; the default max_tokens is 16", async () => {
    const res = await client.completions.create({ model: server.modelId, prompt: PROMPT, temperature: 0 });
    expect(res.object).toBe("text_completion");
    expect(res.id).toStartWith("cmpl-");
    expect(res.choices).toHaveLength(1);
    const c = res.choices[0]!;
    expect(c.logprobs).toBeNull();
    expect(["stop", "length"]).toContain(c.finish_reason);
    const u = res.usage!;
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    expect(u.prompt_tokens).toBeGreaterThan(3);
    expect(u.completion_tokens).toBeLessThanOrEqual(16);
    if (c.finish_reason === "length") expect(u.completion_tokens).toBe(16);
  });

  test("the prompt is continued as written, not through the chat template: fewer prompt tokens than chat's", async () => {
    const raw = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 1 });
    const chat = await client.chat.completions.create({ model: server.modelId, messages: [{ role: "user", content: PROMPT }], max_tokens: 1 });
    expect(raw.usage!.prompt_tokens).toBeLessThan(chat.usage!.prompt_tokens);
  });

  test("an array of prompts gets n choices each, indexed prompt by prompt; its usage adds the prompts up", async () => {
    const other = "Once upon a time";
    const [a, b, both] = await Promise.all([
      client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy }),
      client.completions.create({ model: server.modelId, prompt: other, ...greedy }),
      client.completions.create({ model: server.modelId, prompt: [PROMPT, other], n: 2, ...greedy }),
    ]);
    expect(both.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(both.choices.map((c) => c.text)).toEqual([a.choices[0]!.text, a.choices[0]!.text, b.choices[0]!.text, b.choices[0]!.text]);
    expect(both.usage!.prompt_tokens).toBe(a.usage!.prompt_tokens + b.usage!.prompt_tokens);
    expect(both.usage!.completion_tokens).toBe(2 * (a.usage!.completion_tokens + b.usage!.completion_tokens));
  });

  test("token-id prompts: ids and arrays of ids; echo writes their text; an id outside the vocabulary is a 400", async () => {
    const ids = [300, 411, 520, 77, 1200];
    const many = await client.completions.create({ model: server.modelId, prompt: [ids, ids.slice(0, 2)], ...greedy });
    expect(many.usage!.prompt_tokens).toBe(ids.length + 2);
    expect(many.choices).toHaveLength(2);
    const plain = await client.completions.create({ model: server.modelId, prompt: ids, ...greedy });
    expect(plain.usage!.prompt_tokens).toBe(ids.length);
    expect(plain.choices[0]!.text).toBe(many.choices[0]!.text);
    const echoed = await client.completions.create({ model: server.modelId, prompt: ids, ...greedy, echo: true });
    const text = echoed.choices[0]!.text;
    expect(text.endsWith(plain.choices[0]!.text)).toBe(true);
    const promptText = text.slice(0, text.length - plain.choices[0]!.text.length);
    // The echoed text is the ids' own: sent back as text it tokenizes to as many tokens.
    const again = await client.completions.create({ model: server.modelId, prompt: promptText, ...greedy, max_tokens: 1 });
    expect([promptText.length > 0, again.usage!.prompt_tokens]).toEqual([true, ids.length]);
    const err = await client.completions.create({ model: server.modelId, prompt: [10_000_000], max_tokens: 2 }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, "prompt"]);
  });

  test("echo prepends the prompt text to each choice's text", async () => {
    const plain = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy });
    const echoed = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, echo: true });
    expect(echoed.choices[0]!.text).toBe(PROMPT + plain.choices[0]!.text);
    expect(echoed.usage).toEqual(plain.usage);
  });

  test("stop ends the text before the stop string, with finish_reason stop", async () => {
    const whole = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 16 });
    const text = whole.choices[0]!.text;
    const at = Math.max(1, Math.floor(text.length / 2));
    const stop = text.slice(at, at + 2);
    expect(stop.length).toBe(2);
    const cut = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 16, stop: [stop] });
    expect(cut.choices[0]!.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(cut.choices[0]!.finish_reason).toBe("stop");
  });

  test("logprobs: one entry per generated token, the greedy token's logprob the largest of its top list", async () => {
    const res = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, logprobs: 3 });
    const c = res.choices[0]!;
    const lp = c.logprobs!;
    expect(lp.tokens!.length).toBe(res.usage!.completion_tokens);
    expect(lp.token_logprobs!.length).toBe(lp.tokens!.length);
    expect(lp.text_offset![0]).toBe(0);
    lp.tokens!.forEach((token, i) => {
      const top = lp.top_logprobs![i]!;
      // The sampled token is always among them, so up to logprobs + 1 entries.
      expect(Object.keys(top).length).toBeGreaterThanOrEqual(3);
      expect(Object.keys(top).length).toBeLessThanOrEqual(4);
      expect(lp.token_logprobs![i]!).toBeCloseTo(Math.max(...Object.values(top)), 5);
      expect(top[token]).toBeCloseTo(lp.token_logprobs![i]!, 5);
      if (i > 0) expect(lp.text_offset![i]).toBe(lp.text_offset![i - 1]! + lp.tokens![i - 1]!.length);
    });
    if (!c.text.includes("\uFFFD")) expect(lp.tokens!.join("")).toBe(c.text);
  });

  test("logit_bias steers the pick through the chat mapping: one token, every step", async () => {
    const res = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 4, logprobs: 0, logit_bias: { "113": 100 } });
    const tokens = res.choices[0]!.logprobs!.tokens!;
    expect(tokens).toHaveLength(4);
    expect(new Set(tokens).size).toBe(1);
  });

  test("streamed: the chunks spell the whole answer, with its logprobs in order, then usage and [DONE]", async () => {
    const whole = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, logprobs: 2, echo: false });
    const stream = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, logprobs: 2, stream: true, stream_options: { include_usage: true } });
    let text = "";
    const tokens: string[] = [];
    const offsets: number[] = [];
    let finish: string | null = null;
    let usageChunk = null;
    for await (const chunk of stream) {
      if (chunk.usage) usageChunk = chunk.usage;
      for (const c of chunk.choices) {
        text += c.text;
        tokens.push(...(c.logprobs?.tokens ?? []));
        offsets.push(...(c.logprobs?.text_offset ?? []));
        finish = c.finish_reason ?? finish;
      }
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(tokens).toEqual(whole.choices[0]!.logprobs!.tokens!);
    expect(offsets).toEqual(whole.choices[0]!.logprobs!.text_offset!);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usageChunk).toEqual(whole.usage!);
  });

  test("streamed with echo and n: each choice starts with the prompt", async () => {
    const stream = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, n: 2, echo: true, stream: true });
    const texts = ["", ""];
    for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.text;
    const whole = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, echo: true });
    expect(texts).toEqual([whole.choices[0]!.text, whole.choices[0]!.text]);
  });

  test("the usage row is written under the completions endpoint with the reported counts", async () => {
    const { data, response } = await client.completions.create({ model: server.modelId, prompt: [PROMPT, "Hello"], ...greedy }).withResponse();
    const requestId = response.headers.get("x-request-id")!;
    const row = (await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.requestId, requestId)).get(), { what: "the usage row" }))!;
    expect([row.endpoint, row.model, row.status, row.inputTokens, row.outputTokens]).toEqual(["completions", server.modelId, "completed", data.usage!.prompt_tokens, data.usage!.completion_tokens]);
  });

  test("GET /v1/models says the model takes completions", async () => {
    const m = (await client.models.retrieve(server.modelId)) as unknown as { capabilities: { completions: boolean; chat: boolean } };
    expect(m.capabilities.completions).toBe(true);
  });
});
