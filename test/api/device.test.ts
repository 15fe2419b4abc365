// The device choice on a real kiln: KILN_DEVICE=webgpu serves the tiny model on ONNX Runtime's webgpu EP (Mesa's
// software Vulkan driver here), /v1/models and /metrics say so, the log names the EP's node placement; with the Vulkan
// driver hidden, an explicit webgpu stops start-up with one line and auto falls back to the CPU with a log line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildModel, PRESETS } from "../../src/modelgen/index.ts";
import { chooseDevices, type DeviceProbes } from "../../src/devices/choose-devices.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import type { ModelEntry } from "../../src/models/registry.ts";
import { expectBatchedEqualsAlone } from "../helpers/batched-answers.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess } from "../load/server-process.ts";

const root = join(import.meta.dir, "..", "..");
/** The Vulkan loader finds no driver: what a box without a GPU driver looks like to kiln. */
const NO_DRIVER = { VK_ICD_FILENAMES: "/nonexistent/icd.json", VK_DRIVER_FILES: "/nonexistent/icd.json" };

describe("KILN_DEVICE=webgpu", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ KILN_DEVICE: "webgpu" });
  }, 180_000);
  afterAll(() => server?.stop(0));

  test("the model is served from its q4f16 graph on the GPU; /v1/models, /metrics and the log say so", async () => {
    const models = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { id: string; device: string; weights: string }[] };
    expect(models.data.map((m) => [m.id, m.device, m.weights])).toEqual([[server.modelId, "webgpu", "q4f16"]]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain(`kiln_model_device_info{model="${server.modelId}",device="webgpu",weights="q4f16"} 1`);
    const placed = server.logs.find((l) => l.msg === "model device");
    expect(placed).toMatchObject({ model: server.modelId, device: "webgpu", dtype: "q4f16", reason: "KILN_DEVICE says webgpu" });
    const ready = server.logs.find((l) => l.msg === "worker ready");
    expect(ready).toMatchObject({ device: "webgpu", dtype: "q4f16" });
    // Every matmul and attention node on the GPU (the load refuses a graph where one is not); the CPU keeps at most
    // the rotary angles' few scalar ops (a few hundred values a pass).
    const placement = String(ready!.placement);
    expect(placement).toMatch(/WebGpuExecutionProvider: \d+ MatMulNBits, .*\d+ GroupQueryAttention/);
    const onCpu = /CPUExecutionProvider: ([^;]*)/.exec(placement)?.[1] ?? "";
    expect(onCpu).not.toMatch(/MatMul|Attention|Gemm|Softmax/);
  });

  test("a chat completion runs on it, streamed and not", async () => {
    const body = { model: server.modelId, max_tokens: 6, temperature: 0, ignore_eos: true, messages: [{ role: "user", content: "Hello there" }] };
    const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { usage: { completion_tokens: number }; choices: { message: { content: string } }[] };
    expect(json.usage.completion_tokens).toBe(6);
    const stream = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ ...body, stream: true }) });
    const text = await stream.text();
    const content = text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "").join("");
    // Greedy on the same device: the stream says what the plain answer said.
    expect(content).toBe(json.choices[0]!.message.content);
  });

  test("a repeated prompt reads its prefix from the prefix cache on the GPU too", async () => {
    const content = Array.from({ length: 12 }, (_, i) => `line ${i} of a prompt long enough for whole blocks`).join("\n");
    const body = JSON.stringify({ model: server.modelId, max_tokens: 4, temperature: 0, messages: [{ role: "user", content }] });
    const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
    const cached: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body });
      expect(res.status).toBe(200);
      const json = (await res.json()) as { usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } } };
      cached.push(json.usage.prompt_tokens_details.cached_tokens);
      if (i === 1) expect(cached[1]).toBeGreaterThanOrEqual(json.usage.prompt_tokens - 16);
    }
    expect(cached[0]).toBe(0);
    expect(cached[1]).toBeGreaterThan(0);
  });
});

describe("an operator's own transformers.js folder (no kiln.json, a q4f16 graph taking attention_mask)", () => {
  let server: TestServer;
  beforeAll(async () => {
    const dir = join(tempDir("kiln-operator-folder-"), "operator-tiny-v1");
    await buildModel({ spec: { ...PRESETS.tiny!, id: "operator-tiny-v1" }, dtypes: ["fp32", "q4f16"], outDir: dir, gpuLengths: "attention_mask" });
    rmSync(join(dir, "kiln.json"));
    // Its repeats would read the prefix cache, whose fp16 passes of other sizes may tip a near-tie (README: Prefix cache,
    // Exactness): this server is about batching, so the cache is off.
    server = await startTestServer({ KILN_DEVICE: "webgpu", KILN_PREFIX_CACHE: "0" }, { modelDir: dir });
  }, 180_000);
  afterAll(() => server?.stop(0));

  test("runs on the GPU, batched: greedy answers in a batch equal the same requests one at a time", async () => {
    const models = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { id: string; device: string; weights: string }[] };
    expect(models.data.map((m) => [m.id, m.device, m.weights])).toEqual([["operator-tiny-v1", "webgpu", "q4f16"]]);
    await expectBatchedEqualsAlone(server, "operator-tiny-v1", 12);
    // Its GroupQueryAttention graph batches right-padded rows, on the device as on the CPU (operator-gqa-folder.test.ts).
    expect(server.logs.find((l) => l.msg === "worker ready")).toMatchObject({ device: "webgpu", dtype: "q4f16" });
  }, 120_000);
});

describe("without a Vulkan driver", () => {
  test("KILN_DEVICE=webgpu stops start-up with one line naming why (exit 2), before anything listens", async () => {
    const modelsDir = join(await tinyModelDir(), "..");
    const proc = Bun.spawn([process.execPath, join(root, "src", "main.ts"), "serve", "--port", "0", "--data-dir", tempDir(), "--models-dir", modelsDir], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, ...NO_DRIVER, KILN_DEVICE: "webgpu", KILN_BUILTIN_MODELS: "none", KILN_LOG_LEVEL: "error" },
    });
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(code).toBe(2);
    const lines = err.split("\n").filter((l) => l.startsWith("kiln: "));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^kiln: device webgpu \(KILN_DEVICE\) cannot work here: the webgpu probe failed: no WebGPU adapter \(No supported adapters\); Vulkan: vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER/);
    expect(out).not.toContain("listening");
  }, 120_000);

  test("auto falls back to the CPU and logs why; the model serves", async () => {
    const modelsDir = join(await tinyModelDir(), "..");
    const server = await startServerProcess({ dataDir: tempDir(), modelsDir, env: { ...NO_DRIVER, KILN_DEVICE: "auto", KILN_BUILTIN_MODELS: "none" }, logLevel: "info" });
    try {
      const models = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { device: string; weights: string }[] };
      expect(models.data.map((m) => [m.device, m.weights])).toEqual([["cpu", "fp32"]]);
      expect(server.log()).toMatch(/"msg":"model device","model":"kiln-tiny-v1","device":"cpu","dtype":"fp32","reason":"auto: vkCreateInstance failed/);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe("chooseDevices", () => {
  const entry = (): ModelEntry => ({ id: "kiln-tiny-v1", defaultDtype: "fp32", dtypes: ["fp32", "q4f16"], device: null, media: null, diffusion: null } as unknown as ModelEntry);

  test("a hardware adapter whose probe fails: auto keeps the CPU, and the log has the probe's reason", async () => {
    const logger = memoryLogger();
    const probes: DeviceProbes = { adapters: () => ({ adapters: [{ name: "Broken GPU", software: false }] }), probe: async () => ({ ok: false, error: "no WebGPU adapter (No supported adapters)" }) };
    const m = entry();
    await chooseDevices([m], "auto", logger, probes);
    expect(m.placement).toEqual({ device: "cpu", dtype: "fp32", reason: "auto: the webgpu probe failed: no WebGPU adapter (No supported adapters)" });
    expect(logger.lines.find((l) => l.msg === "webgpu probe")).toMatchObject({ ok: false, reason: "no WebGPU adapter (No supported adapters)" });
  });

  test("the probe is not run when nothing may use the GPU (a software adapter under auto, or cpu)", async () => {
    let probed = 0;
    const probes: DeviceProbes = { adapters: () => ({ adapters: [{ name: "llvmpipe", software: true }] }), probe: async () => (probed++, { ok: true, ms: 1 }) };
    await chooseDevices([entry()], "auto", memoryLogger(), probes);
    await chooseDevices([entry()], "cpu", memoryLogger(), probes);
    expect(probed).toBe(0);
  });
});
