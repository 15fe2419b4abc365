// An operator's transformers.js folder whose q4 graph attends by GroupQueryAttention (the layout of onnx-community's
// model_q4.onnx; no kiln.json), served on the CPU: its rows go right-padded, so four requests share the worker's batch
// at once, and greedy answers in that batch equal the same requests one at a time. That runner keeps only the last
// position's logits, so a prompt to score (echo with logprobs) is a 400 naming echo, not a failed generation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildModel, PRESETS } from "../../src/modelgen/index.ts";
import { expectBatchedEqualsAlone } from "../helpers/batched-answers.ts";
import { tempDir } from "../helpers/kiln.ts";
import { parsePrometheusText, samplesOf } from "../helpers/prom-text.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

const ID = "operator-tiny-v1";
let server: TestServer;
beforeAll(async () => {
  const dir = join(tempDir("kiln-operator-gqa-"), ID);
  await buildModel({ spec: { ...PRESETS.tiny!, id: ID }, dtypes: ["q4"], outDir: dir, gpuLengths: "attention_mask", gqaQ4: true });
  rmSync(join(dir, "kiln.json"));
  // Repeats would read the prefix cache, whose passes of other sizes may tip a near-tie: this is about batching.
  server = await startTestServer({ KILN_PREFIX_CACHE: "0" }, { modelDir: dir });
}, 180_000);
afterAll(() => server?.stop(0));

const headers = () => ({ authorization: `Bearer ${server.key}`, "content-type": "application/json" });

describe("an operator's GroupQueryAttention folder on the CPU", () => {
  test("four requests share the worker's batch; greedy answers in a batch equal the same requests one at a time", async () => {
    const models = (await (await fetch(`${server.url}/v1/models`, { headers: headers() })).json()) as { data: { id: string; device: string; weights: string }[] };
    expect(models.data.map((m) => [m.id, m.device, m.weights])).toEqual([[ID, "cpu", "q4"]]);

    // Four long streams at once: all four sit in the worker's batch (one at a time before, its left padding unsafe).
    const long = { model: ID, messages: [{ role: "user", content: "go" }], max_tokens: 3000, temperature: 0, ignore_eos: true, stream: true };
    const controllers = [0, 1, 2, 3].map(() => new AbortController());
    const streams = await Promise.all(controllers.map((c) => fetch(`${server.url}/v1/chat/completions`, { method: "POST", signal: c.signal, headers: headers(), body: JSON.stringify(long) })));
    await Promise.all(streams.map((s) => s.body!.getReader().read()));
    const held = async () => samplesOf(parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text()), "kiln_worker_batch_size", { model: ID }).reduce((n, s) => n + s.value, 0);
    expect(await held()).toBe(4);
    for (const c of controllers) c.abort();
    await waitFor(() => server.runtime.scheduler.load().active === 0, { what: "the aborted streams to leave the batch" });

    await expectBatchedEqualsAlone(server, ID, 24);
  }, 120_000);

  test("echo with logprobs is a 400 naming echo and saying why", async () => {
    for (const extra of [{ max_tokens: 0 }, { max_tokens: 4 }]) {
      const res = await fetch(`${server.url}/v1/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: ID, prompt: "Hi there", echo: true, logprobs: 1, ...extra }) });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { type: string; param: string; message: string } };
      expect(error).toMatchObject({ type: "invalid_request_error", param: "echo", message: expect.stringContaining("GroupQueryAttention export") });
    }
    // Without echo the same model completes.
    const ok = await fetch(`${server.url}/v1/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: ID, prompt: "Hi there", logprobs: 1, max_tokens: 4 }) });
    expect(ok.status).toBe(200);
  }, 60_000);
});
