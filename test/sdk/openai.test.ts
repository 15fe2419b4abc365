// The official openai client, unmodified, against a real kiln.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiTestServer } from "../helpers/openai-server.ts";
import type { TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: OpenAI;

beforeAll(async () => ({ server, client } = await openaiTestServer()));
afterAll(() => server.stop(1000));

describe("openai SDK", () => {
  test("models.list and models.retrieve", async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toContain(server.modelId);
    expect((await client.models.retrieve(server.modelId)).id).toBe(server.modelId);
  });

  test("non-streaming chat completion with real usage", async () => {
    const res = await client.chat.completions.create({
      model: server.modelId,
      messages: [{ role: "user", content: "Say hello" }],
      max_tokens: 8,
      temperature: 0,
    });
    expect(res.object).toBe("chat.completion");
    expect(res.id).toStartWith("chatcmpl-");
    expect(res.choices).toHaveLength(1);
    expect(typeof res.choices[0]!.message.content).toBe("string");
    expect(["stop", "length", "tool_calls"]).toContain(res.choices[0]!.finish_reason);
    expect(res.usage!.prompt_tokens).toBeGreaterThan(5);
    expect(res.usage!.completion_tokens).toBeGreaterThan(0);
    expect(res.usage!.completion_tokens).toBeLessThanOrEqual(8);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
  });

  test("streaming chat completion ends with a usage chunk and equals the non-streamed text (greedy)", async () => {
    const params = { model: server.modelId, messages: [{ role: "user" as const, content: "Count to five" }], max_tokens: 12, temperature: 0 };
    const whole = await client.chat.completions.create(params);
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.delta.content) text += choice.delta.content;
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(text).toBe(whole.choices[0]!.message.content!);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  test("n choices are served together, each its own sequence", async () => {
    const res = await client.chat.completions.create({
      model: server.modelId, messages: [{ role: "user", content: "Pick a word" }], max_tokens: 6, n: 3, temperature: 1, seed: 7,
    });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(res.usage!.completion_tokens).toBeGreaterThanOrEqual(3);
  });

  test("a 400 surfaces as BadRequestError with param", async () => {
    const err = await client.chat.completions
      .create({ model: server.modelId, messages: [{ role: "user", content: "x" }], top_p: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("top_p");
  });
});
