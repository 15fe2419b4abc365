// Builds dist/kiln for real, copies it alone into an empty folder and runs it with an empty environment.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { compileKiln, type CompileResult } from "../../build/compile.ts";
import { devOnlyPackages, forbiddenInputs } from "../../build/compile/checks.ts";
import { noiseImage, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { freePort, rssBytes, runBinary, runOnce, SHARED_SHADER_CACHE, waitForHttp, type RunningBinary } from "./binary-process.ts";

const KEY_RE = /LLM\|\d+\|[A-Za-z0-9_-]{32,}/;
const work = mkdtempSync(join(tmpdir(), "kiln-compile-"));
const runDir = join(work, "run");
const home = join(work, "home");
let first: CompileResult;
let second: CompileResult;
let server: RunningBinary;
let base = "";
let key = "";
let startupMs = 0;

beforeAll(async () => {
  first = await compileKiln({ outfile: join(work, "a", "kiln") });
  second = await compileKiln({ outfile: join(work, "b", "kiln") });
  console.log(`binary: ${first.bytes} bytes (${(first.bytes / 2 ** 20).toFixed(1)} MiB), built in ${(first.ms / 1000).toFixed(1)} s`);
  mkdirSync(runDir);
  mkdirSync(home);
  copyFileSync(first.outfile, join(runDir, "kiln"));
  const port = freePort();
  base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  server = runBinary(runDir, ["--port", String(port)], home);
  await waitForHttp(`${base}/v1/status`, 60_000, () => server.proc.exitCode === null);
  startupMs = performance.now() - started;
  key = (await server.waitFor(KEY_RE, 5_000))[0];
  console.log(`first start to first served request: ${startupMs.toFixed(0)} ms, RSS ${(rssBytes(server.proc.pid) / 2 ** 20).toFixed(0)} MiB`);
}, 120_000);

afterAll(() => {
  if (server && server.proc.exitCode === null) server.proc.kill("SIGKILL");
  for (const p of gpuProcs) if (p.exitCode === null) p.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

describe("the build", () => {
  test("builds the same bytes twice", () => {
    expect(first.bytes).toBe(second.bytes);
    expect(first.sha256).toBe(second.sha256);
    expect(first.bytes).toBeGreaterThan(100 * 2 ** 20);
  });

  test("bundles the server, the workers (the media decoder's too), the migrations and the model builder, and no test, build tooling or dev-only code", () => {
    for (const needed of ["src/main.ts", "src/native/preload.ts", "workers/inference-worker.ts", "workers/image-worker.ts", "src/native/doctor-worker.ts", "workers/media-worker.ts", "src/db/migrations.gen.ts", "src/api/docs/routes.ts", "src/modelgen/index.ts"]) {
      expect(first.inputs).toContain(needed);
    }
    expect(first.inputs.filter((p) => /^test\//.test(p))).toEqual([]);
    const devOnly = devOnlyPackages(pkg);
    expect(devOnly).toEqual(expect.arrayContaining(["openai", "typescript", "drizzle-kit"]));
    expect(forbiddenInputs(first.inputs, devOnly)).toEqual([]);
  });
});

describe("the executable, alone in an empty folder", () => {
  test("prints the first key on first start", () => {
    expect(server.output()).toMatch(KEY_RE);
  });

  test("serves /v1/status and /v1/models with that key", async () => {
    expect((await fetch(`${base}/v1/status`)).status).toBe(200);
    expect((await fetch(`${base}/v1/models`)).status).toBe(401);
    const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { id: string }[] };
    expect(body.object).toBe("list");
    expect(body.data.length).toBeGreaterThan(0);
  });

  test("serves the docs page, its assets and the OpenAPI document", async () => {
    const page = await fetch(`${base}/swagger`);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.startsWith("/")).toBe(true);
      const res = await fetch(`${base}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const doc = (await (await fetch(`${base}/swagger/json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/status", "/v1/models", "/v1/chat/completions", "/v1/images/generations", "/v1/images/edits"]));
  });

  test("serves the dashboard from its embedded files; an operator made by ./kiln users add signs in", async () => {
    const made = await runOnce(runDir, ["users", "add", "admin", "--operator"], home, 60_000, "binary admin password\n");
    expect(made.out).toContain('Created operator "admin"');
    const login = await fetch(`${base}/dashboard/login`);
    const html = await login.text();
    expect(login.headers.get("content-security-policy")).toContain("script-src 'self'");
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBe(3);
    for (const asset of [...assets, "/dashboard/assets/uplot.js", "/dashboard/assets/uplot.css"]) {
      const res = await fetch(`${base}${asset}`);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const loginCookie = login.headers.getSetCookie()[0]!.split(";")[0]!;
    const token = /name="_login" value="([^"]+)"/.exec(html)![1]!;
    const signed = await fetch(`${base}/dashboard/login`, {
      method: "POST", redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
      body: new URLSearchParams({ _login: token, username: "admin", password: "binary admin password", next: "/dashboard/teams" }),
    });
    expect(signed.status).toBe(303);
    const session = signed.headers.getSetCookie().find((c) => c.startsWith("kiln_session="))!.split(";")[0]!;
    const teams = await fetch(`${base}/dashboard/teams`, { headers: { cookie: session } });
    expect(teams.status).toBe(200);
    expect(await teams.text()).toContain(">default</a>");
  });

  /** The built-in text model (the multimodal one is built in beside it). */
  async function firstModel(): Promise<string> {
    const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["kiln-tiny-v1", "kiln-tiny-omni-v1", "kiln-tiny-image-v1"]));
    return "kiln-tiny-v1";
  }

  test("answers a chat completion from the default model in a worker thread", async () => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: await firstModel(), messages: [{ role: "user", content: "hi" }], max_tokens: 8 }),
    });
    const body = (await res.json()) as { object: string; choices: { message: { role: string; content: string } }[]; usage: { completion_tokens: number } };
    expect(res.status).toBe(200);
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.message.role).toBe("assistant");
    expect(typeof body.choices[0]!.message.content).toBe("string");
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(8);
  }, 60_000);

  test("answers image and audio input from the built-in multimodal model: its encoders run in the worker", async () => {
    const ask = async (part?: unknown) => {
      const content = part ? [{ type: "text", text: "What is this?" }, part] : "What is this?";
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "kiln-tiny-omni-v1", messages: [{ role: "user", content }], max_tokens: 4 }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    };
    const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
    const alone = await ask();
    // 16 image rows on the tiny model; 1 s of audio is 8 rows.
    expect(await ask({ type: "image_url", image_url: { url: `data:image/png;base64,${b64(await noiseImage("png", 40, 30))}` } })).toBe(alone + 16);
    expect(await ask({ type: "input_audio", input_audio: { data: b64(wavBytes(sine(440, 1, 16000), 16000)), format: "wav" } })).toBe(alone + 8);
  }, 60_000);

  test("generates and edits images on the built-in image model: its worker, sharp and the PNG encoder run in the executable", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const made = await post("/v1/images/generations", { model: "kiln-tiny-image-v1", prompt: "a boat", size: "1024x512" });
    expect(made.status).toBe(200);
    const generated = (await made.json()) as { size: string; data: { b64_json: string }[] };
    expect(generated.size).toBe("192x96");
    const png = Buffer.from(generated.data[0]!.b64_json, "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    const edited = await post("/v1/images/edits", { model: "kiln-tiny-image-v1", prompt: "at night", images: [{ image_url: `data:image/png;base64,${png.toString("base64")}` }], output_format: "jpeg" });
    expect(edited.status).toBe(200);
    const jpeg = Buffer.from(((await edited.json()) as { data: { b64_json: string }[] }).data[0]!.b64_json, "base64");
    expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
  }, 60_000);

  test("streams a chat completion as server-sent events ending in [DONE]", async () => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: await firstModel(), messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: { delta: { content?: string }; finish_reason: string | null }[] });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.object).toBe("chat.completion.chunk");
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(true);
  }, 60_000);

  test("serves /metrics to a loopback scraper, counting the requests above", async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const families = parsePrometheusText(await res.text());
    // Two text chats, then three on the multimodal model (text alone, an image, a clip).
    expect(sampleValue(families, "kiln_http_requests_total", { method: "POST", route: "/v1/chat/completions", status: "200" })).toBe(5);
    expect(sampleValue(families, "kiln_output_tokens_total", { model: await firstModel(), endpoint: "chat" })).toBeGreaterThan(0);
    expect(sampleValue(families, "kiln_input_tokens_total", { model: "kiln-tiny-omni-v1", endpoint: "chat" })).toBeGreaterThan(16 + 8);
    expect(sampleValue(families, "kiln_images_total", { model: "kiln-tiny-image-v1", endpoint: "images" })).toBe(2);
    expect(sampleValue(families, "process_resident_memory_bytes")).toBeGreaterThan(1e6);
  });

  test("stops cleanly on SIGTERM", async () => {
    server.proc.kill("SIGTERM");
    const code = await Promise.race([server.proc.exited, Bun.sleep(10_000).then(() => "timeout")]);
    expect(code).toBe(0);
  }, 15_000);

  test("reuses the unpacked libraries on later starts: kiln doctor passes", async () => {
    const runtime = join(runDir, "data", "runtime");
    const [folder, ...others] = readdirSync(runtime);
    expect(others).toEqual([]);
    expect(folder).toMatch(/^\d+\.\d+\.\d+.*-[0-9a-f]{12}$/);
    const libs = readdirSync(join(runtime, folder!)).sort();
    expect(libs).toEqual(["libonnxruntime.so.1", "libvips-cpp.so.8.18.7"]);
    const mtimes = libs.map((l) => statSync(join(runtime, folder!, l)).mtimeMs);
    const doctor = await runOnce(runDir, ["doctor"], home);
    expect(doctor.out).toContain("All required checks passed.");
    expect(doctor.out).toMatch(/worker thread +ok/);
    expect(doctor.code).toBe(0);
    expect(libs.map((l) => statSync(join(runtime, folder!, l)).mtimeMs)).toEqual(mtimes);
  }, 60_000);

  test("--version names kiln and its runtime pieces", async () => {
    const { code, out } = await runOnce(runDir, ["--version"], home);
    expect(code).toBe(0);
    expect(out).toMatch(/^kiln \d+\.\d+\.\d+/);
    expect(out).toMatch(/onnxruntime +1\.\d+\.\d+/);
    expect(out).toMatch(/libvips 8\.\d+\.\d+/);
    expect(out).toContain("single executable");
  });
});

// The environment that hides the Vulkan driver from the loader (older loaders read the first, newer ones the second).
const NO_DRIVER = { VK_ICD_FILENAMES: "/nonexistent", VK_DRIVER_FILES: "/nonexistent" };
const gpuProcs: Subprocess[] = [];

/** The binary copied alone into a fresh folder of `work`, with a fresh home (Mesa's shader cache is the suite's: SHARED_SHADER_CACHE). */
function freshBox(name: string): { dir: string; home: string } {
  const dir = join(work, name);
  const boxHome = join(dir, "home");
  mkdirSync(boxHome, { recursive: true });
  copyFileSync(first.outfile, join(dir, "kiln"));
  return { dir, home: boxHome };
}

/** `env -i PATH=/usr/bin:/bin HOME=<home> <vars> ./kiln <args>`: runBinary's empty environment plus these variables. */
function startWith(dir: string, args: string[], boxHome: string, vars: Record<string, string>) {
  const proc = Bun.spawn(["./kiln", ...args], { cwd: dir, env: { PATH: "/usr/bin:/bin", HOME: boxHome, ...SHARED_SHADER_CACHE, ...vars }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  gpuProcs.push(proc);
  const text = { out: "", err: "" };
  const pump = async (stream: ReadableStream<Uint8Array>, into: "out" | "err") => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text[into] += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([pump(proc.stdout, "out"), pump(proc.stderr, "err")]);
  return { proc, text, drained };
}

/** Runs one command to completion; stdout and stderr apart. */
async function runWith(dir: string, args: string[], boxHome: string, vars: Record<string, string>, timeoutMs = 60_000) {
  const run = startWith(dir, args, boxHome, vars);
  const timer = setTimeout(() => run.proc.kill("SIGKILL"), timeoutMs);
  const code = await run.proc.exited;
  clearTimeout(timer);
  await run.drained;
  return { code, ...run.text };
}

const answers = (url: string) => fetch(url).then(() => true, () => false);

describe("the executable on the webgpu path (this machine: Mesa's lavapipe, a software Vulkan adapter)", () => {
  test("kiln doctor lists the llvmpipe adapter as software, and its webgpu provider row runs from the unpacked libraries", async () => {
    const box = freshBox("gpu-doctor");
    const { code, out } = await runWith(box.dir, ["doctor"], box.home, {});
    expect(code).toBe(0);
    expect(out).toContain("single executable");
    expect(out).toMatch(new RegExp(`^native libraries +ok +libvips and ONNX Runtime unpacked in ${box.dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/data/runtime/`, "m"));
    expect(out).toMatch(/^adapters +ok +1 Vulkan adapter: llvmpipe .*\(software\)$/m);
    expect(out).toMatch(/^ {2}llvmpipe .*: vendor Mesa \(software\), type cpu, backend vulkan, driver llvmpipe: Mesa .*; software adapter: WebGPU works but runs on the CPU/m);
    expect(out).toMatch(/^provider: webgpu +ok +ran MatMul\+Add as \S+ on WebGpuExecutionProvider, output as expected$/m);
    expect(out).toContain("All required checks passed.");
  }, 120_000);

  test("kiln doctor with the Vulkan driver hidden says there is none, how to get one, and still exits 0", async () => {
    const box = freshBox("gpu-doctor-hidden");
    const { code, out } = await runWith(box.dir, ["doctor"], box.home, NO_DRIVER);
    expect(out).toMatch(/^adapters +WARN +.*no Vulkan driver/m);
    expect(out).toMatch(/^ {2}adapters \(optional\): kiln runs on the CPU without one; for WebGPU install a Vulkan driver/m);
    expect(out).toMatch(/^provider: webgpu +WARN +/m);
    expect(out).not.toMatch(/^adapters:$/m);
    expect(out).toContain("All required checks passed.");
    expect(code).toBe(0);
  }, 120_000);

  test("KILN_DEVICE=webgpu serves the built-in text model on the GPU path: a chat completion, /v1/models and /metrics say webgpu q4f16", async () => {
    const box = freshBox("gpu-serve");
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const started = performance.now();
    const run = startWith(box.dir, ["--port", String(port)], box.home, { KILN_DEVICE: "webgpu", KILN_BUILTIN_MODELS: "kiln-tiny-v1" });
    // Unless another webgpu run of the suite came first, the load compiles the shaders (25-90 s on lavapipe on this busy 2-core box).
    await waitFor(() => run.proc.exitCode !== null || /kiln listening on/.test(run.text.out), { what: "kiln listening (webgpu)", timeoutMs: 240_000, intervalMs: 50 });
    if (run.proc.exitCode !== null) throw new Error(`kiln exited ${run.proc.exitCode} while starting:\n${run.text.out}${run.text.err}`);
    console.log(`webgpu start to listening: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const log = run.text.err;
    expect(log).toMatch(/"msg":"webgpu probe","ok":true,"ms":\d+,"adapters":\["llvmpipe/);
    expect(log).toContain('"msg":"model device","model":"kiln-tiny-v1","device":"webgpu","dtype":"q4f16","reason":"KILN_DEVICE says webgpu"');
    // The matmuls run on the GPU (the rotary angles' few scalar ops may stay on the CPU, never a matmul).
    expect(log).toMatch(/"msg":"worker ready".*"model":"kiln-tiny-v1".*"device":"webgpu","dtype":"q4f16","placement":"[^"]*WebGpuExecutionProvider: \d+ MatMulNBits/);
    const firstKey = run.text.out.match(KEY_RE)![0];
    const auth = { authorization: `Bearer ${firstKey}` };
    const asked = performance.now();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "kiln-tiny-v1", messages: [{ role: "user", content: "hi" }], max_tokens: 6, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    console.log(`first webgpu chat completion: ${((performance.now() - asked) / 1000).toFixed(1)} s`);
    const chat = (await res.json()) as { choices: { message: { content: string }; finish_reason: string }[]; usage: { completion_tokens: number } };
    // Greedy on fixed weights: the same six tokens every run, none of them the end of the turn.
    expect([chat.choices[0]!.finish_reason, chat.usage.completion_tokens]).toEqual(["length", 6]);
    expect(chat.choices[0]!.message.content.length).toBeGreaterThan(0);
    const models = (await (await fetch(`${url}/v1/models`, { headers: auth })).json()) as { data: { id: string; device: string; weights: string }[] };
    expect(models.data.map((m) => [m.id, m.device, m.weights])).toEqual([["kiln-tiny-v1", "webgpu", "q4f16"]]);
    const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
    expect(sampleValue(metrics, "kiln_model_device_info", { model: "kiln-tiny-v1", device: "webgpu", weights: "q4f16" })).toBe(1);
    run.proc.kill("SIGTERM");
    expect(await run.proc.exited).toBe(0);
  }, 480_000);

  test("KILN_DEVICE=webgpu with the driver hidden exits 2 with one line naming why, and never listens", async () => {
    const box = freshBox("gpu-none");
    const port = freePort();
    const url = `http://127.0.0.1:${port}/v1/status`;
    const run = startWith(box.dir, ["--port", String(port)], box.home, { KILN_DEVICE: "webgpu", KILN_BUILTIN_MODELS: "kiln-tiny-v1", ...NO_DRIVER });
    // Knock on its port for as long as it runs: nothing may answer, ever.
    let answered = false;
    while (run.proc.exitCode === null) if (await answers(url)) answered = true;
    expect(await run.proc.exited).toBe(2);
    await run.drained;
    expect(answered).toBe(false);
    expect(await answers(url)).toBe(false);
    const said = run.text.err.split("\n").filter((l) => l.startsWith("kiln:"));
    expect(said).toEqual([expect.stringMatching(/^kiln: device webgpu \(KILN_DEVICE\) cannot work here: .*no WebGPU adapter/)]);
    expect(`${run.text.out}${run.text.err}`).not.toMatch(/kiln listening|"msg":"worker ready"|"msg":"listening"/);
  }, 120_000);
});
