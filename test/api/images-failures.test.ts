// Image failures and drain through a real kiln: a model whose output is NaN answers 503 server_error with no code
// (retryable, the spec's image row), a worker lost mid-denoise the same, neither billing an image; a drain gives a
// running image job its grace period while new requests get 503 server_shutting_down.
import { afterEach, describe, expect, test } from "bun:test";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GraphBuilder, T } from "../../src/modelgen/onnx-builder.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyImageModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

const started: TestServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop(1000)));
});

async function serve(modelDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer(env, { modelDir });
  started.push(s);
  return s;
}

/** A copy of the tiny image model whose UNet answers NaN everywhere (0 / 0), with the same inputs and output. */
async function nanModel(): Promise<string> {
  const dir = join(tempDir("kiln-nan-model-"), "kiln-tiny-image-v1");
  cpSync(await tinyImageModelDir(), dir, { recursive: true });
  const g = new GraphBuilder();
  const sample = g.input("sample", T.FLOAT, ["batch_size", 4, "height", "width"]);
  g.input("timestep", T.INT64, ["steps"]);
  g.input("encoder_hidden_states", T.FLOAT, ["batch_size", "sequence_length", 32]);
  const zero = g.node("Sub", [sample, sample]);
  g.node("Div", [zero, zero], {}, { output: "out_sample" });
  g.output("out_sample", T.FLOAT, ["batch_size", 4, "height", "width"]);
  writeFileSync(join(dir, "unet", "model.onnx"), g.encode("nan-unet"));
  return dir;
}

function generate(s: TestServer, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${s.url}/v1/images/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, prompt: "a quiet harbour", ...body }),
  });
}

/** Holds every render message the image worker is sent until `release` (the render stays in flight meanwhile). */
function holdRenders(s: TestServer) {
  const worker = s.workers.at(-1)!;
  const post = worker.postMessage.bind(worker);
  const held: unknown[] = [];
  worker.postMessage = (msg: { type?: string }) => (msg?.type === "render" ? void held.push(msg) : post(msg));
  return {
    worker,
    held,
    release() {
      worker.postMessage = post;
      for (const m of held.splice(0)) post(m);
    },
  };
}

const lastUsage = (s: TestServer) => sqliteOf(s.deps.db).$client.query("SELECT status, images, cost_micros AS cost FROM usage ORDER BY id DESC LIMIT 1").get();

describe("image failures", () => {
  test("NaN output is the model's retryable failure: 503 server_error with no code, and nothing billed", async () => {
    const s = await serve(await nanModel());
    const res = await generate(s, { n: 2 });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: unknown }).error).toEqual({
      message: "The image model produced an unusable image; retry the request", type: "server_error", param: null, code: null,
    });
    expect(lastUsage(s)).toEqual({ status: "failed", images: 0, cost: 0 });
    // The log has the worker's own reason; the client did not see it.
    expect(s.logs.some((l) => l.msg === "request failed" && l.cause === "render_retryable" && String(l.detail).length > 0)).toBe(true);
  });

  test("a worker lost mid-denoise: 503 server_error with no code; a replacement serves the next request", async () => {
    const s = await serve(await tinyImageModelDir());
    const hold = holdRenders(s);
    const pending = generate(s);
    await waitFor(() => hold.held.length, { what: "the render reaching the worker", until: (n) => n === 1 });
    hold.worker.terminate();
    const res = await pending;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: unknown }).error).toEqual({ message: "The model's worker failed; retry the request", type: "server_error", param: null, code: null });
    expect(lastUsage(s)).toEqual({ status: "failed", images: 0, cost: 0 });
    await waitFor(() => s.deps.registry.healthOf(s.modelId).status, { what: "the replacement worker", until: (h) => h === "operational" });
    expect((await generate(s)).status).toBe(200);
  });
});

describe("drain", () => {
  test("a running image job gets the grace period; requests during the drain get 503 server_shutting_down", async () => {
    const s = await serve(await tinyImageModelDir(), { KILN_SHUTDOWN_GRACE_MS: "10000" });
    const hold = holdRenders(s);
    const running = generate(s, { n: 2 });
    await waitFor(() => hold.held.length, { what: "both renders reaching the worker", until: (n) => n === 2 });
    const stopped = s.stop();
    const refused = await generate(s);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([503, "server_shutting_down"]);
    hold.release();
    const res = await running;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(2);
    await stopped;
    started.splice(started.indexOf(s), 1);
  });
});
