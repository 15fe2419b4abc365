// A served model's batching check over HTTP: four greedy chat requests sent together answer as the same requests sent
// one at a time (rows of different prompt lengths sharing the worker's batch change nothing).
import { expect } from "bun:test";

const QUESTIONS = ["Hi", "What is the capital of France, in one word?", "Count to three", "Say something nice about the weather today"];

export async function expectBatchedEqualsAlone(server: { url: string; key: string }, model: string, maxTokens: number): Promise<void> {
  const ask = async (content: string) => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: maxTokens, temperature: 0, ignore_eos: true, messages: [{ role: "user", content }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
  };
  const alone: string[] = [];
  for (const q of QUESTIONS) alone.push(await ask(q));
  expect(await Promise.all(QUESTIONS.map(ask))).toEqual(alone);
}
