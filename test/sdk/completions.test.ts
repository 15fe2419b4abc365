// POST /v1/completions through the official openai client against a real kiln on the tiny model: the legacy format's
// prompt shapes, n per prompt, echo, stop, logprobs (the prompt's too, with echo) and usage, whole and streamed, with the
// values checked (a greedy token's logprob is the largest of its top list; a prompt token's is what a teacher-forced step
// gives; the stream spells the whole answer) and the usage row written.
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
    // As chat's: the prompt tokens read from the prefix cache (none: a prompt this short fills no block).
    expect(u.prompt_tokens_details).toEqual({ cached_tokens: 0 });
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

  test("echo with logprobs: the prompt's tokens first, the first one's null, each a log probability ≤ 0 within its top list", async () => {
    const res = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 4, echo: true, logprobs: 3 });
    const c = res.choices[0]!;
    const lp = c.logprobs!;
    const promptTokens = res.usage!.prompt_tokens;
    expect(lp.tokens!.length).toBe(promptTokens + res.usage!.completion_tokens);
    expect([lp.token_logprobs![0], lp.top_logprobs![0], lp.text_offset![0]] as unknown[]).toEqual([null, null, 0]);
    for (let i = 1; i < lp.tokens!.length; i++) {
      const value = lp.token_logprobs![i]!;
      const top = lp.top_logprobs![i]!;
      expect(value).toBeLessThanOrEqual(0);
      // The token itself is always listed, beside up to `logprobs` alternatives, none likelier than the list's first.
      expect(top[lp.tokens![i]!]).toBeCloseTo(value, 5);
      expect(Object.keys(top).length).toBeLessThanOrEqual(4);
      const values = Object.values(top);
      expect(Math.max(...values)).toBeGreaterThanOrEqual(value);
      if (Object.keys(top).every((k) => !/^\d+$/.test(k))) expect(values.slice(0, -1)).toEqual([...values.slice(0, -1)].sort((a, b) => b - a));
    }
    // The prompt's text spelled by its tokens, then the generated ones from where the prompt ends.
    expect(lp.tokens!.slice(0, promptTokens).join("")).toEndWith(PROMPT.slice(1));
    expect(lp.text_offset![promptTokens]).toBe(PROMPT.length);
    expect(c.text.startsWith(PROMPT)).toBe(true);
  });

  test("each prompt token's logprob is what a teacher-forced step gives: the prefix run alone, the next token forced", async () => {
    const ids = [300, 411, 520, 77, 1200, 64, 901];
    const scored = await client.completions.create({ model: server.modelId, prompt: ids, ...greedy, max_tokens: 1, echo: true, logprobs: 2 });
    const lp = scored.choices[0]!.logprobs!;
    for (let k = 0; k + 1 < ids.length; k++) {
      // logit_bias forces the prompt's next token; logprobs are read before any bias, so its entry is the model's own.
      const step = await client.completions.create({ model: server.modelId, prompt: ids.slice(0, k + 1), ...greedy, max_tokens: 1, logprobs: 2, logit_bias: { [String(ids[k + 1])]: 100 } });
      const forced = step.choices[0]!.logprobs!;
      expect(forced.tokens![0]).toBe(lp.tokens![k + 1]!);
      expect(lp.token_logprobs![k + 1]!).toBeCloseTo(forced.token_logprobs![0]!, 3);
      // The alternatives are the step's own: the same tokens with the same values.
      const a = lp.top_logprobs![k + 1]!;
      const b = forced.top_logprobs![0]!;
      expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
      for (const key of Object.keys(a)) expect(a[key]!).toBeCloseTo(b[key]!, 3);
    }
  });

  test("max_tokens 0 with echo: the prompt alone with its logprobs, nothing generated; without echo a 400", async () => {
    const ids = [300, 411, 520, 77, 1200];
    const [none, one] = await Promise.all([
      client.completions.create({ model: server.modelId, prompt: ids, temperature: 0, max_tokens: 0, echo: true, logprobs: 1 }),
      client.completions.create({ model: server.modelId, prompt: ids, temperature: 0, max_tokens: 1, echo: true, logprobs: 1 }),
    ]);
    const c = none.choices[0]!;
    expect([c.finish_reason, none.usage!.prompt_tokens, none.usage!.completion_tokens]).toEqual(["length", ids.length, 0]);
    expect(c.text).toBe(one.choices[0]!.text.slice(0, c.text.length));
    const cut = (l: typeof c.logprobs) => ({ ...l, tokens: l!.tokens!.slice(0, ids.length), token_logprobs: l!.token_logprobs!.slice(0, ids.length), top_logprobs: l!.top_logprobs!.slice(0, ids.length), text_offset: l!.text_offset!.slice(0, ids.length) });
    expect(c.logprobs).toEqual(cut(one.choices[0]!.logprobs));
    // Without logprobs the prompt comes back as text only.
    const plain = await client.completions.create({ model: server.modelId, prompt: ids, max_tokens: 0, echo: true });
    expect([plain.choices[0]!.text, plain.choices[0]!.logprobs, plain.usage!.completion_tokens]).toEqual([c.text, null, 0]);
    const err = await client.completions.create({ model: server.modelId, prompt: ids, max_tokens: 0 }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, "max_tokens"]);
  });

  test("a scored prompt never reads the prefix cache: a repeat, and one after the plain prompt filled it, score it whole", async () => {
    // 48 tokens: three of the cache's 16-token blocks.
    const ids = Array.from({ length: 48 }, (_, i) => 200 + ((i * 37) % 900));
    const ask = () => client.completions.create({ model: server.modelId, prompt: ids, temperature: 0, max_tokens: 2, echo: true, logprobs: 2 });
    const first = await ask();
    const plain = await client.completions.create({ model: server.modelId, prompt: ids, temperature: 0, max_tokens: 2 });
    // The plain prompt found the blocks the scored one stored; the scored repeat reads none of them.
    expect(plain.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(32);
    const again = await ask();
    expect([first.usage!.prompt_tokens_details!.cached_tokens, again.usage!.prompt_tokens_details!.cached_tokens]).toEqual([0, 0]);
    expect(again.choices[0]!.logprobs!.tokens!.length).toBe(ids.length + 2);
    expect(again.choices[0]!.logprobs!.token_logprobs!).toEqual(first.choices[0]!.logprobs!.token_logprobs!);
    expect(again.choices[0]!.text).toBe(first.choices[0]!.text);
  });

  test("streamed echo with logprobs and n: each choice's first chunk is the prompt with its entries, the rest as whole", async () => {
    const whole = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, echo: true, logprobs: 2 });
    const stream = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, n: 2, echo: true, logprobs: 2, stream: true });
    const got = [0, 1].map(() => ({ text: "", tokens: [] as string[], values: [] as (number | null)[], offsets: [] as number[], first: null as string | null }));
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        const g = got[c.index]!;
        g.first ??= c.text;
        g.text += c.text;
        g.tokens.push(...(c.logprobs?.tokens ?? []));
        g.values.push(...((c.logprobs?.token_logprobs ?? []) as (number | null)[]));
        g.offsets.push(...(c.logprobs?.text_offset ?? []));
      }
    }
    const w = whole.choices[0]!;
    for (const g of got) {
      expect(g.first).toBe(PROMPT);
      expect([g.text, g.tokens, g.offsets]).toEqual([w.text, w.logprobs!.tokens!, w.logprobs!.text_offset!]);
      expect(g.values[0]).toBeNull();
      g.values.slice(1).forEach((v, i) => expect(v!).toBeCloseTo(w.logprobs!.token_logprobs![i + 1]!, 5));
    }
  });

  test("n with a seed at temperature 1: distinct choices, the same again with the same seed, others with another", async () => {
    const ask = (seed: number) => client.completions.create({ model: server.modelId, prompt: PROMPT, temperature: 1, max_tokens: 12, n: 3, seed });
    const [a, again, other] = await Promise.all([ask(42), ask(42), ask(7)]);
    const texts = (r: typeof a) => r.choices.map((c) => c.text);
    expect(new Set(texts(a)).size).toBe(3);
    expect(texts(again)).toEqual(texts(a));
    expect(texts(other)).not.toEqual(texts(a));
  });

  test("echo with logprobs 0: each prompt token after the first lists itself alone", async () => {
    const res = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, max_tokens: 2, echo: true, logprobs: 0 });
    const lp = res.choices[0]!.logprobs!;
    expect(lp.top_logprobs![0] as unknown).toBeNull();
    lp.top_logprobs!.slice(1).forEach((top, i) => expect(Object.keys(top)).toEqual([lp.tokens![i + 1]!]));
  });

  test("a refused streamed request answers 400 before any chunk; the next request is served", async () => {
    const err = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, logprobs: 30, stream: true }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, "logprobs"]);
    const stream = await client.completions.create({ model: server.modelId, prompt: PROMPT, ...greedy, stream: true });
    let finishes = 0;
    for await (const chunk of stream) finishes += chunk.choices.filter((c) => c.finish_reason !== null).length;
    // The finish reason comes once, on the choice's last chunk.
    expect(finishes).toBe(1);
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
