// Log probabilities through the official openai client: chat completions, whole and streamed, with the values checked
// against what they must be (a greedy token leads its own top list, a top list's probabilities sum to at most 1, the
// tokens spell the answer) rather than only their shape.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiTestServer } from "../helpers/openai-server.ts";
import type { TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: OpenAI;
beforeAll(async () => ({ server, client } = await openaiTestServer()));
afterAll(() => server.stop(1000));

type Entry = { token: string; logprob: number; bytes: number[] | null; top_logprobs: { token: string; logprob: number; bytes: number[] | null }[] };

/** The checks every entry of a greedy run passes, whatever the weights. */
function checkGreedy(entries: Entry[], top: number) {
  for (const e of entries) {
    expect(e.top_logprobs).toHaveLength(top);
    expect(e.logprob).toBeLessThanOrEqual(0);
    // Greedy picks the most likely token: its log probability is the top list's first and largest.
    expect(e.logprob).toBeCloseTo(e.top_logprobs[0]!.logprob, 5);
    for (let i = 1; i < e.top_logprobs.length; i++) expect(e.top_logprobs[i]!.logprob).toBeLessThanOrEqual(e.top_logprobs[i - 1]!.logprob);
    const mass = e.top_logprobs.reduce((sum, t) => sum + Math.exp(t.logprob), 0);
    expect(mass).toBeLessThanOrEqual(1 + 1e-6);
    expect(new TextDecoder().decode(Uint8Array.from(e.bytes!))).toBe(e.token);
  }
}
const bytesOf = (entries: Entry[]) => Uint8Array.from(entries.flatMap((e) => e.bytes!));

describe("chat completions logprobs", () => {
  const body = { messages: [{ role: "user" as const, content: "Say something." }], max_tokens: 12, temperature: 0 };

  test("whole answer: one entry per answer token, whose bytes spell the content", async () => {
    const res = await client.chat.completions.create({ model: server.modelId, ...body, logprobs: true, top_logprobs: 5 });
    const entries = res.choices[0]!.logprobs!.content as Entry[];
    expect(entries.length).toBe(res.usage!.completion_tokens);
    checkGreedy(entries, 5);
    expect(new TextDecoder().decode(bytesOf(entries))).toBe(res.choices[0]!.message.content!);
  });

  test("streamed: the chunks' entries are the whole answer's, in order", async () => {
    const whole = await client.chat.completions.create({ model: server.modelId, ...body, logprobs: true, top_logprobs: 3 });
    const stream = await client.chat.completions.create({ model: server.modelId, ...body, logprobs: true, top_logprobs: 3, stream: true });
    const streamed: Entry[] = [];
    let text = "";
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      text += c.delta.content ?? "";
      streamed.push(...((c.logprobs?.content ?? []) as Entry[]));
    }
    expect(text).toBe(whole.choices[0]!.message.content!);
    expect(streamed.map((e) => [e.token, e.logprob.toFixed(5)])).toEqual((whole.choices[0]!.logprobs!.content as Entry[]).map((e) => [e.token, e.logprob.toFixed(5)]));
    checkGreedy(streamed, 3);
  });

  test("logprobs without top_logprobs gives empty top lists; without logprobs, null", async () => {
    const bare = await client.chat.completions.create({ model: server.modelId, ...body, logprobs: true });
    expect((bare.choices[0]!.logprobs!.content as Entry[]).every((e) => e.top_logprobs.length === 0)).toBe(true);
    const none = await client.chat.completions.create({ model: server.modelId, ...body });
    expect(none.choices[0]!.logprobs).toBeNull();
  });

  test("the model's own distribution: a logit bias changes the pick, not the reported log probability's source", async () => {
    const res = await client.chat.completions.create({ model: server.modelId, ...body, max_tokens: 3, logprobs: true, top_logprobs: 2, logit_bias: { "113": 100 } });
    const entries = res.choices[0]!.logprobs!.content as Entry[];
    // Token 113 is written every step because of the bias, yet its reported probability is the unbiased one (< 1).
    for (const e of entries) expect(e.logprob).toBeLessThan(-0.01);
  });

  test("top_logprobs out of range, or without logprobs, is a 400 naming it", async () => {
    for (const extra of [{ logprobs: true, top_logprobs: 21 }, { top_logprobs: 2 }]) {
      const err = await client.chat.completions.create({ model: server.modelId, ...body, ...extra }).catch((e) => e);
      expect([err.status, err.param]).toEqual([400, "top_logprobs"]);
    }
  });
});

describe("Responses logprobs (include message.output_text.logprobs)", () => {
  const body = { input: "Say something.", max_output_tokens: 16, temperature: 0, reasoning: { effort: "none" as const } };
  const textPart = (res: any) => res.output.find((i: any) => i.type === "message").content.find((c: any) => c.type === "output_text");

  test("whole: the output_text's entries spell its text, each greedy token leads its top list", async () => {
    const res = await client.responses.create({ model: server.modelId, ...body, include: ["message.output_text.logprobs"], top_logprobs: 4 });
    const part = textPart(res);
    const entries = part.logprobs as Entry[];
    expect(entries.length).toBeGreaterThan(0);
    checkGreedy(entries, 4);
    expect(new TextDecoder().decode(bytesOf(entries))).toBe(part.text);
    expect((res as any).top_logprobs).toBe(4);
  });

  test("streamed: the deltas' entries add up to the done event's, which equal the whole answer's", async () => {
    const whole = await client.responses.create({ model: server.modelId, ...body, include: ["message.output_text.logprobs"], top_logprobs: 2 });
    const stream = await client.responses.create({ model: server.modelId, ...body, include: ["message.output_text.logprobs"], top_logprobs: 2, stream: true });
    const fromDeltas: Entry[] = [];
    let done: Entry[] = [];
    for await (const ev of stream as AsyncIterable<any>) {
      if (ev.type === "response.output_text.delta") fromDeltas.push(...ev.logprobs);
      if (ev.type === "response.output_text.done") done = ev.logprobs;
    }
    const want = (textPart(whole).logprobs as Entry[]).map((e) => e.token);
    expect(fromDeltas.map((e) => e.token)).toEqual(want);
    expect(done.map((e) => e.token)).toEqual(want);
  });

  test("without the include, output_text has no entries; top_logprobs 21 is a 400", async () => {
    const res = await client.responses.create({ model: server.modelId, ...body });
    expect(textPart(res).logprobs ?? []).toEqual([]);
    const err = await client.responses.create({ model: server.modelId, ...body, top_logprobs: 21 }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, "top_logprobs"]);
  });
});
