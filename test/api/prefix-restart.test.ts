// The prefix cache is memory only: after a restart on the same data dir a repeated prompt reads nothing cached, and
// nothing else is lost (the stored chain continues, the usage rows and the key are still there).
import { expect, test } from "bun:test";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const INPUT =
  "Explain in a few calm sentences how a glacier moves down a valley, why it carves a U-shaped profile, and what it " +
  "leaves behind when it melts back over the centuries that follow.";

async function respond(server: ServerProcess, body: Record<string, unknown>): Promise<{ id: string; cached: number; input: number }> {
  const res = await fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: INPUT, max_output_tokens: 16, temperature: 0, store: true, ...body }),
  });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  const r = (await res.json()) as { id: string; usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } } };
  return { id: r.id, cached: r.usage.input_tokens_details.cached_tokens, input: r.usage.input_tokens };
}

test("a restart empties the prefix cache and loses nothing else", async () => {
  const dataDir = tempDir();
  const modelsDir = dirname(await tinyModelDir());
  const first = await startServerProcess({ dataDir, modelsDir, env: { KILN_THREADS: "1" } });
  const model = "kiln-tiny-v1";
  const a = await respond(first, { model });
  expect(a.cached).toBe(0);
  const again = await respond(first, { model });
  expect(again.cached).toBeGreaterThanOrEqual(32);
  expect(await first.stop()).toBe(0);

  const second = await startServerProcess({ dataDir, modelsDir, env: { KILN_THREADS: "1" }, key: first.key });
  try {
    const after = await respond(second, { model });
    expect(after.input).toBe(a.input);
    expect(after.cached).toBe(0);
    // The stored chain from before the restart continues; its history is computed again, then cached anew.
    const next = await respond(second, { model, previous_response_id: again.id, input: "And in one word?" });
    expect(next.input).toBeGreaterThan(a.input);
    const stored = await fetch(`${second.url}/v1/responses/${a.id}`, { headers: { authorization: `Bearer ${second.key}` } });
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as { usage: { input_tokens_details: { cached_tokens: number } } }).usage.input_tokens_details.cached_tokens).toBe(0);
  } finally {
    await second.stop();
  }
});
