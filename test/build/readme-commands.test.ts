// Every command the README shows, run the way a user types it after the Quick start: through npm, from this
// checkout, with no Bun on PATH. A command added to the README without a row here fails the first test.
import { smallStepTokensFor } from "../../src/models/step-formats.ts";
import { readCpuInfo } from "../../src/native/cpu.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { delimiter, join } from "node:path";
import { clientRequest } from "../helpers/client-corpus.ts";
import { tempDir } from "../helpers/kiln.ts";
import { prefixOutputProblems } from "../load/prefix-output.ts";
import { freePort, SHARED_SHADER_CACHE, waitForHttp } from "./binary-process.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { readmeCommands } from "./readme-commands.ts";
import { writeGgufModel } from "../../src/modelgen/gguf-model.ts";
import { writeHfFolder } from "../../src/modelgen/hf-write.ts";
import { PRESETS } from "../../src/modelgen/spec.ts";

const root = join(import.meta.dir, "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const work = tempDir("kiln-readme-");
const dataDir = join(work, "data");

/** This environment without any Bun: PATH minus every directory holding a `bun`, and no Bun or test variables. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(BUN_|NODE_ENV$|KILN_)/.test(k)) env[k] = v;
  env.PATH = (process.env.PATH ?? "").split(delimiter).filter((d) => d && !existsSync(join(d, "bun"))).join(delimiter);
  return { ...env, KILN_DATA_DIR: dataDir, KILN_LOG_LEVEL: "warn", ...extra };
}

/** Runs one command line in a shell, as typed, to completion. */
function sh(command: string, extra: Record<string, string> = {}, timeoutMs = 300_000, input?: string): { code: number; out: string } {
  const r = spawnSync("bash", ["-c", command], { cwd: root, env: userEnv(extra), encoding: "utf8", timeout: timeoutMs, input });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** Starts a long-running command in its own process group; resolves with its output once `ready` matches. */
async function background(command: string, ready: RegExp, extra: Record<string, string> = {}, cwd = root, env = userEnv(extra), readyMs = 120_000) {
  const proc = spawn("bash", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (b) => (out += b));
  proc.stderr!.on("data", (b) => (out += b));
  const deadline = Date.now() + readyMs;
  while (!ready.test(out)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`\`${command}\` did not get ready:\n${out}`);
    await Bun.sleep(50);
  }
  running.push(proc);
  return { proc, output: () => out };
}

/** SIGTERM to the whole group (npm → node → bun); resolves with the leader's exit code, or the signal that ended it. */
async function stop(proc: ChildProcess): Promise<number | string | null> {
  const exited = new Promise<number | string | null>((resolve) => proc.once("exit", (code, signal) => resolve(code ?? signal)));
  process.kill(-proc.pid!, "SIGTERM");
  return exited;
}

/** The JSON document in a command's output (npm prints its own lines around it). */
function jsonIn(out: string): unknown {
  const text = out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`no JSON document in:\n${out}`);
  }
}

const running: ChildProcess[] = [];
afterAll(() => {
  for (const p of running) if (p.exitCode === null) try { process.kill(-p.pid!, "SIGKILL"); } catch { /* gone */ }
  rmSync(join(root, "dist", "readme-box"), { recursive: true, force: true });
});

const hashDir = (dir: string) => {
  const h = createHash("sha256");
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort()) h.update(f).update(readFileSync(f));
  return h.digest("hex");
};

/** What each command of the README is checked by: the tests below name these rows. */
const COVERED = new Set([
  "npm start",
  "npm test",
  "export MODEL_API_KEY='LLM|1|…'",
  'curl -s http://127.0.0.1:8080/v1/models -H "Authorization: Bearer $MODEL_API_KEY"',
  "curl -s http://127.0.0.1:8080/metrics",
  "curl -s http://127.0.0.1:8080/v1/chat/completions -H \"Authorization: Bearer $MODEL_API_KEY\" -H 'content-type: application/json' -d '{\"model\":\"kiln-tiny-v1\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}'",
  "curl -s http://127.0.0.1:8080/v1/images/generations -H \"Authorization: Bearer $MODEL_API_KEY\" -H 'content-type: application/json' -d '{\"model\":\"kiln-tiny-image-v1\",\"prompt\":\"a lighthouse at dusk\",\"size\":\"1024x512\",\"n\":2}'",
  "npm run build",
  "scp dist/kiln box:/opt/kiln/",
  "ssh box 'cd /opt/kiln && ./kiln doctor && ./kiln --port 8080 --host 0.0.0.0'",
  // GPU box (run on the binary by "the GPU box section" below).
  "./kiln doctor",
  "KILN_DEVICE=webgpu ./kiln",
  "npm run kiln -- keys create --team default --name laptop",
  "npm run kiln -- doctor",
  "npm run kiln -- …",
  "npm run bench",
  "npm run bench -- --profile",
  "npm run bench -- --stored",
  "npm run bench -- --input-rules",
  "npm run bench -- --upload",
  "npm run bench -- --upload-s3",
  "npm run bench -- --file-burst",
  "npm run bench -- --media-decode",
  "npm run bench -- --media",
  "npm run bench -- --images",
  "npm run bench -- --embeddings",
  "npm run bench -- --prefix",
  "npm run bench -- --live-bus",
  "npm run bench -- --cluster",
  "npm run bench -- --batch",
  "npm run bench -- --kv-join",
  "npm run bench -- --gguf <file.gguf>",
  "npm run cluster",
  "npm run db:generate",
  "kiln [serve]",
  "kiln keys create --team T --name N",
  "kiln keys list",
  "kiln keys revoke <id>",
  "kiln teams create <name>",
  "kiln teams list",
  "kiln status incident add <title> [--message M] [--status S] [--impact degraded|outage]",
  "kiln status incident resolve <id> [--message M]",
  "kiln models list",
  "kiln models build --preset <name> [--dtype fp32,q4]",
  "kiln models import <file.gguf | folder>",
  // Bringing a real model (run by "the real-model section" below).
  "./kiln --model Llama-3.2-1B-Instruct-Q4_K_M.gguf",
  "npm run kiln -- models import ~/models/Qwen3-0.6B",
  "kiln doctor",
  "kiln --version",
  // Teams: rate limits, billing and permissions (the walkthrough and the table, run by "the teams section" below).
  "npm run kiln -- teams create acme",
  "npm run kiln -- tiers set pro --rpm 600 --tpm 2000000",
  "npm run kiln -- teams set acme --tier pro",
  "npm run kiln -- keys create --team acme --name chatbot",
  "npm run kiln -- keys restrict 2 --models kiln-tiny-v1 --endpoints chat",
  "npm run kiln -- billing enable acme",
  'npm run kiln -- billing credit acme 25 --note "invoice 1001"',
  "npm run kiln -- billing show acme",
  "npm run kiln -- usage --team acme --json",
  "kiln tiers set <name> --rpm N --tpm N",
  "kiln tiers list",
  "kiln tiers delete <name>",
  "kiln teams set <team> [--tier T] [--rpm N] [--tpm N] [--models a,b] [--endpoints chat,responses] [--service-tiers default,flex,priority,batch] [--tier-prices batch:0.4]",
  "kiln keys restrict <id> [--models a,b] [--endpoints chat]",
  "kiln billing enable <team>",
  "kiln billing disable <team>",
  "kiln billing credit <team> <amount> [--note N]",
  "kiln billing lapse <team>",
  "kiln billing reinstate <team>",
  "kiln billing show <team> [--limit N] [--json]",
  "kiln usage [--team T] [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--json]",
  // Dashboard (its two commands and the users rows, run by "the dashboard section" below).
  "npm run kiln -- users add admin --operator",
  "npm run kiln -- users add alice --team acme",
  "kiln users add <name> --operator",
  "kiln users add <name> --team <team>",
  "kiln users passwd <name>",
  "kiln users list",
  "kiln users remove <name>",
  // Claude Code's section: a client's commands, not kiln's. The requests that exact setup sent are replayed in
  // test/api/client-replay.test.ts; "the agent clients' settings" below holds the section to them.
  'export ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY="$MODEL_API_KEY"',
  "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1",
  'claude -p "say hi" --model kiln-tiny-v1',
  'claude -p --continue "now say bye" --model kiln-tiny-v1',
]);

test("the agent clients' settings: the Quick start's server, a built-in model, the paths and fields the replayed requests use", () => {
  const corpus = clientRequest("claude-code-first-request");
  const codex = clientRequest("codex-first-turn");
  const builtins = ["kiln-tiny-v1", "kiln-tiny-omni-v1"];
  const claude = readme.slice(readme.indexOf("### Claude Code"), readme.indexOf("### The AI SDK"));
  expect(claude).toContain("ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ");
  for (const [, model] of claude.matchAll(/--model (\S+)/g)) expect(builtins).toContain(model!);
  const toml = readme.slice(readme.indexOf("### Codex CLI"), readme.indexOf("### Claude Code"));
  expect(toml).toContain('base_url = "http://127.0.0.1:8080/v1"');
  expect(toml).toContain('wire_api = "responses"');
  expect(builtins).toContain(/model = "([^"]+)"/.exec(toml)![1]!);
  if (!corpus || !codex) return; // the corpus is beside the repository in CI and here; a lone clone has no replays
  expect(corpus.path.split("?")[0]).toBe("/v1/messages");
  expect(claude).toContain(`thinking: {type: "${(corpus.body.thinking as { type: string }).type}"}`);
  expect(codex.path).toBe("/v1/responses");
});

test("every command the README shows has a check here", () => {
  const shown = readmeCommands(readme);
  expect(shown.length).toBeGreaterThan(20);
  expect(shown.filter((c) => !COVERED.has(c))).toEqual([]);
});

describe("after the Quick start, as typed, with no Bun on PATH", () => {
  test("no bun on the PATH these commands get", () => {
    expect(sh("command -v bun || echo none").out.trim()).toBe("none");
  });

  test("npm start serves; the curl commands work with a key from `npm run kiln -- keys create`", async () => {
    const port = freePort();
    const server = await background("npm start", /kiln listening on http:\/\/\S+/, { KILN_PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    const created = sh("npm run kiln -- keys create --team default --name laptop");
    expect(created.code).toBe(0);
    const key = created.out.match(/LLM\|\d+\|\S+/)![0];
    const curl = (c: string) => sh(c.replace("http://127.0.0.1:8080", base), { MODEL_API_KEY: key });
    const curls = readmeCommands(readme).filter((c) => c.startsWith("curl "));
    const [listCmd, chatCmd, imagesCmd, metricsCmd] = ["/v1/models ", "/v1/chat/", "/v1/images/", "/metrics"].map((path) => curls.find((c) => c.includes(path)));
    const list = JSON.parse(curl(listCmd!).out);
    expect(list.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining(["kiln-tiny-v1", "kiln-tiny-omni-v1", "kiln-tiny-image-v1"]));
    const images = JSON.parse(curl(imagesCmd!).out);
    expect([images.size, images.data.length, images.usage.images]).toEqual(["192x96", 2, 2]);
    expect(Buffer.from(images.data[0].b64_json, "base64").subarray(1, 4).toString()).toBe("PNG");
    const chat = JSON.parse(curl(chatCmd!).out);
    expect(chat.object).toBe("chat.completion");
    expect(chat.usage.completion_tokens).toBeGreaterThan(0);
    expect(chat.choices[0].message.role).toBe("assistant");
    // The scrape from this host (loopback) sees the chat request just made.
    const metrics = curl(metricsCmd!).out;
    expect(metricsCmd).toContain("/metrics");
    expect(metrics).toMatch(/^kiln_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} 1$/m);
    // npm itself dies of the signal it forwards; what matters is that kiln stopped and freed the port.
    expect([0, "SIGTERM"] as (number | string | null)[]).toContain(await stop(server.proc));
    const closed = async () => {
      for (const until = Date.now() + 15_000; Date.now() < until; await Bun.sleep(100)) {
        if (await fetch(`${base}/v1/status`).then(() => false, () => true)) return "closed";
      }
      return "still answering";
    };
    expect(await closed()).toBe("closed");
  }, 180_000);

  test("the CLI table through `npm run kiln -- …`", () => {
    const kiln = (args: string, extra: Record<string, string> = {}) => {
      const r = sh(`npm run kiln -- ${args}`, extra);
      if (r.code !== 0) throw new Error(`npm run kiln -- ${args} exited ${r.code}:\n${r.out}`);
      return r.out;
    };
    expect(kiln("--version")).toMatch(/kiln \d+\.\d+\.\d+/);
    expect(kiln("teams create readers")).toContain('Created team');
    expect(kiln("teams list")).toContain("readers");
    const id = kiln("keys create --team readers --name ci").match(/Created key (\d+)/)![1]!;
    expect(kiln("keys list")).toContain("ci");
    expect(kiln(`keys revoke ${id}`)).toContain(`Revoked key ${id}.`);
    const inc = kiln('status incident add "Disk slow" --impact degraded').match(/Opened incident (\d+)/)![1]!;
    expect(kiln(`status incident resolve ${inc} --message fixed`)).toContain(`Resolved incident ${inc}`);
    const modelsDir = join(work, "models");
    expect(kiln("models build --preset tiny --dtype fp32", { KILN_MODELS_DIR: modelsDir })).toContain("kiln-tiny-v1");
    expect(kiln("models list", { KILN_MODELS_DIR: modelsDir })).toContain("kiln-tiny-v1");
    const folder = join(work, "hf-llama");
    writeHfFolder({ ...PRESETS.tiny!, id: "hf-llama-v1" }, folder, { dtype: "F16" });
    expect(kiln(`models import ${folder} --id hf-llama-v1 --dtype int8`, { KILN_MODELS_DIR: modelsDir })).toContain("imported hf-llama-v1");
    expect(kiln("models list", { KILN_MODELS_DIR: modelsDir })).toContain("hf-llama-v1");
    const doctor = kiln("doctor", { KILN_MODELS_DIR: modelsDir });
    expect(doctor).toContain("All required checks passed.");
    expect(doctor).toMatch(/cpu +ok +\S/);
  }, 180_000);

  test("the teams section: its walkthrough as typed (with the key id it printed), then each row of its table", () => {
    const walkthrough = readmeCommands(readme.slice(readme.indexOf("## Teams: rate limits"))).filter((c) => c.startsWith("npm run kiln -- ")).slice(0, 9);
    expect(walkthrough).toHaveLength(9);
    let keyId = "";
    const said: string[] = [];
    for (const line of walkthrough) {
      const r = sh(keyId ? line.replace("keys restrict 2 ", `keys restrict ${keyId} `) : line);
      if (r.code !== 0) throw new Error(`${line} exited ${r.code}:\n${r.out}`);
      said.push(r.out);
      keyId ||= r.out.match(/Created key (\d+)/)?.[1] ?? "";
    }
    expect(said[2]).toContain('"acme": tier pro');
    expect(said[4]).toContain(`Key ${keyId}: models kiln-tiny-v1, endpoints chat.`);
    expect(said[6]).toContain('Credited team "acme" with 25.00; balance 25.00.');
    expect(said[7]).toMatch(/billing on; balance 25\.00\.[\s\S]*credit +25\.00 +25\.00 +invoice 1001/);
    expect(jsonIn(said[8]!)).toEqual({ object: "list", data: [] });

    const kiln = (args: string) => {
      const r = sh(`npm run kiln -- ${args}`);
      if (r.code !== 0) throw new Error(`npm run kiln -- ${args} exited ${r.code}:\n${r.out}`);
      return r.out;
    };
    expect(kiln("tiers set scratch --rpm 5 --tpm none")).toContain('Tier "scratch": 5 requests and unlimited tokens per minute.');
    expect(kiln("tiers list")).toMatch(/scratch +5 +unlimited +database/);
    expect(kiln("tiers delete scratch")).toContain('Deleted tier "scratch".');
    expect(kiln("teams set acme --rpm 30 --models kiln-tiny-v1 --endpoints chat,responses")).toContain("models kiln-tiny-v1, endpoints chat,responses");
    expect(kiln("teams list")).toMatch(/acme +pro +30\* +2000000 +on +kiln-tiny-v1 +chat,responses +default,flex,batch/);
    expect(kiln("teams set acme --service-tiers default,flex,priority,batch")).toContain("service tiers default,flex,priority,batch (prices default ×1, flex ×0.5, priority ×2, batch ×0.5)");
    expect(kiln(`keys restrict ${keyId} --models all --endpoints all`)).toContain(`Key ${keyId}: models all, endpoints all.`);
    expect(kiln("billing lapse acme")).toContain("has lapsed");
    expect(kiln("billing reinstate acme")).toContain("is reinstated");
    expect(kiln("billing credit acme 0.50")).toContain("balance 25.50");
    expect(jsonIn(kiln("billing show acme --limit 1 --json"))).toMatchObject({ balance_micros: 25_500_000, ledger: [{ amount_micros: 500_000 }] });
    expect(kiln("billing disable acme")).toContain("Billing is off");
    expect(kiln("billing enable acme")).toContain("balance (25.50)");
    expect(kiln("usage --since 2026-01-01 --until 2026-01-31")).toMatch(/^day +team +model +tier +requests/m);
  }, 180_000);

  test("the dashboard section: its accounts as typed (the password on standard input), then each row of the users table", () => {
    const typed = readmeCommands(readme.slice(readme.indexOf("## Dashboard"))).filter((c) => c.startsWith("npm run kiln -- users "));
    expect(typed).toEqual(["npm run kiln -- users add admin --operator", "npm run kiln -- users add alice --team acme"]);
    const said = typed.map((line, i) => {
      const r = sh(line, {}, 300_000, `readme password ${i}\n`);
      if (r.code !== 0) throw new Error(`${line} exited ${r.code}:\n${r.out}`);
      return r.out;
    });
    expect(said[0]).toContain('Created operator "admin" (sees every team).');
    expect(said[1]).toContain('Created member "alice" of team "acme".');
    const users = (args: string, input?: string) => sh(`npm run kiln -- users ${args}`, {}, 300_000, input);
    expect(users("list").out).toMatch(/admin +operator +\(all teams\)[\s\S]*alice +member +acme/);
    expect(users("passwd alice", "a new readme password\n").out).toContain('New password set for "alice"');
    expect(users("add bob --team nowhere", "whatever password\n").out).toContain('no team named "nowhere"');
    expect(users("remove alice").out).toContain('Removed user "alice"');
    expect(users("list").out).not.toContain("alice");
  }, 180_000);

  test("npm run build, then the binary copied alone to a box: ./kiln doctor && ./kiln --port … --host 0.0.0.0", async () => {
    const built = sh("npm run build");
    expect(built.code).toBe(0);
    const box = join(root, "dist", "readme-box");
    mkdirSync(box, { recursive: true });
    copyFileSync(join(root, "dist", "kiln"), join(box, "kiln"));
    const port = freePort();
    // The README's ssh line, run on this machine: its folder is the copy above, its port a free one.
    const sshLine = readmeCommands(readme).find((c) => c.startsWith("ssh box "))!;
    const remote = sshLine.match(/^ssh box '(.*)'$/)![1]!.replace("/opt/kiln", box).replace("--port 8080", `--port ${port}`);
    // The box has no Node, Bun or project: an empty environment, like `ssh box '…'`.
    const server = await background(remote, /kiln listening on/, {}, box, { PATH: "/usr/bin:/bin", HOME: box });
    expect(server.output()).toContain("All required checks passed.");
    await waitForHttp(`http://127.0.0.1:${port}/v1/status`, 30_000, () => server.proc.exitCode === null);
    expect(await stop(server.proc)).toBe(0);
  }, 300_000);

  test("the GPU box section on the binary alone: ./kiln doctor shows the adapter, KILN_DEVICE=webgpu ./kiln serves on webgpu", async () => {
    const section = readme.slice(readme.indexOf("## GPU box"), readme.indexOf("## Configuration"));
    // Its commands (its prose also names `npm test`, run above).
    const typed = readmeCommands(section).filter((c) => c.includes("./kiln"));
    expect(typed).toEqual(["./kiln doctor", "KILN_DEVICE=webgpu ./kiln"]);
    // The binary as `npm run build` writes it (again: this test may run alone), in a folder of its own, with an empty environment.
    expect(sh("npm run build").code).toBe(0);
    const box = join(root, "dist", "readme-box", "gpu");
    mkdirSync(box, { recursive: true });
    copyFileSync(join(root, "dist", "kiln"), join(box, "kiln"));
    const boxEnv = { PATH: "/usr/bin:/bin", HOME: box, ...SHARED_SHADER_CACHE };
    const doctor = spawnSync("bash", ["-c", typed[0]!], { cwd: box, env: boxEnv, encoding: "utf8", timeout: 120_000 });
    expect([doctor.status, doctor.stdout]).toEqual([0, expect.stringContaining("All required checks passed.")]);
    // This project's set-up installs Mesa's software Vulkan driver, so the box has one adapter and WebGPU runs.
    expect(doctor.stdout).toMatch(/^adapters +ok +\d+ Vulkan adapters?: \S/m);
    expect(doctor.stdout).toMatch(/^provider: webgpu +ok +ran MatMul\+Add as \S+ on WebGpuExecutionProvider/m);
    // Each adapter line has the shape the README's sample shows.
    const adapterLine = /^ {2}.+: vendor .+, type [a-z-]+, backend vulkan, driver .+, API \d+\.\d+\.\d+, \d+\.\d GiB device-local, max storage buffer \d+ MiB/m;
    expect(doctor.stdout).toMatch(adapterLine);
    expect(section).toMatch(adapterLine);

    const port = freePort();
    const keyFile = join(box, "first-key");
    const started = performance.now();
    // Mesa's shader cache is the suite's: unless the binary's own webgpu test came first, the load compiles them all
    // (up to a minute on lavapipe on a busy box).
    const env = { ...boxEnv, KILN_PORT: String(port), KILN_BUILTIN_MODELS: "kiln-tiny-v1", KILN_FIRST_KEY_FILE: keyFile };
    const server = await background(typed[1]!, /kiln listening on/, {}, box, env, 240_000);
    console.log(`KILN_DEVICE=webgpu ./kiln listening after ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(server.output()).toContain('"msg":"model device","model":"kiln-tiny-v1","device":"webgpu","dtype":"q4f16"');
    const key = readFileSync(keyFile, "utf8").match(/LLM\|\d+\|\S+/)![0];
    const listCmd = readmeCommands(readme).find((c) => c.startsWith("curl ") && c.includes("/v1/models "))!;
    const list = JSON.parse(sh(listCmd.replace("http://127.0.0.1:8080", `http://127.0.0.1:${port}`), { MODEL_API_KEY: key }).out);
    expect(list.data.map((m: { id: string; device: string; weights: string }) => [m.id, m.device, m.weights])).toEqual([["kiln-tiny-v1", "webgpu", "q4f16"]]);
    expect(await stop(server.proc)).toBe(0);
  }, 400_000);

  test("the real-model section as typed: npm run kiln -- models import ~/models/Qwen3-0.6B, then ./kiln --model <file.gguf> on the binary alone", async () => {
    const section = readme.slice(readme.indexOf("### Bringing a real model"), readme.indexOf("### Multimodal folders"));
    const typed = readmeCommands(section).filter((c) => c.includes("kiln "));
    expect(typed).toEqual(["./kiln --model Llama-3.2-1B-Instruct-Q4_K_M.gguf", "npm run kiln -- models import ~/models/Qwen3-0.6B"]);
    // Stand-ins with those names (the shapes are small; the layouts and formats are the real ones).
    const home = join(work, "home");
    writeHfFolder({ ...PRESETS.tiny!, id: "qwen3-stand-in-v1", architecture: "qwen3", tiedEmbeddings: true }, join(home, "models", "Qwen3-0.6B"), { dtype: "BF16", shards: 2 });
    const modelsDir = join(work, "real-models");
    const imported = sh(typed[1]!, { HOME: home, KILN_MODELS_DIR: modelsDir });
    expect([imported.code, imported.out]).toEqual([0, expect.stringMatching(/imported qwen3-0\.6b in \d+\.\d+s → /)]);
    const again = sh(typed[1]!, { HOME: home, KILN_MODELS_DIR: modelsDir });
    expect(again.out).toContain("qwen3-0.6b is already imported from this file");

    expect(sh("npm run build").code).toBe(0);
    const box = join(root, "dist", "readme-box", "real-model");
    mkdirSync(box, { recursive: true });
    copyFileSync(join(root, "dist", "kiln"), join(box, "kiln"));
    const spec = { ...PRESETS.tiny!, id: "llama-stand-in-v1", hidden: 256, headDim: 64, intermediate: 512 };
    await writeGgufModel(spec, "q4_k_m", join(box, "Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
    const port = freePort();
    const keyFile = join(box, "first-key");
    const env = { PATH: "/usr/bin:/bin", HOME: box, KILN_PORT: String(port), KILN_BUILTIN_MODELS: "none", KILN_FIRST_KEY_FILE: keyFile };
    const server = await background(typed[0]!, /kiln listening on/, {}, box, env);
    expect(server.output()).toContain('"msg":"model imported","source":');
    const key = readFileSync(keyFile, "utf8").match(/LLM\|\d+\|\S+/)![0];
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "llama-3.2-1b-instruct-q4-k-m", messages: [{ role: "user", content: "Hello" }], max_tokens: 4 }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBeGreaterThan(0);
    expect(await stop(server.proc)).toBe(0);
    // The second start finds the import current and reads nothing of the file.
    const second = await background(typed[0]!, /kiln listening on/, {}, box, env);
    expect(second.output()).not.toContain('"msg":"model imported"');
    expect(await stop(second.proc)).toBe(0);
  }, 400_000);

  test("npm run bench (a quick run on the tiny preset, with --profile) prints the CPU, the int8 accuracy, the table, the profile and the device section", () => {
    const r = sh("npm run bench -- --profile", {
      KILN_BENCH_PRESET: "tiny", KILN_BENCH_ROUNDS: "1", KILN_BENCH_LEVELS: "1,2", KILN_BENCH_TOKENS: "8", KILN_BENCH_MODELS: join(work, "bench-models"),
    });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: .+int8 kernels: /m);
    expect(r.out).toMatch(/^accuracy: int8 vs fp32 next-token logits over a 32-token teacher-forced run, correlation min 0\.9\d+/m);
    expect(r.out).toContain("| clients/batch | direct tok/s |");
    // Passes of a few tokens run on q4 beside int8 wherever the CPU has AVX2 (src/models/step-formats.ts).
    if (smallStepTokensFor(readCpuInfo()) > 0) {
      expect(r.out).toMatch(/^model kiln-tiny-bench-v1, int8 \(q4 for passes of ≤ \d+ tokens\)/m);
      expect(r.out).toMatch(/^accuracy: q4 vs fp32 next-token logits/m);
    }
    // llama.cpp runs right after each kiln level, and the versus table has a row per level (unless it cannot load here).
    if (!r.out.includes("llama.cpp rows skipped")) {
      expect(r.out).toMatch(/^direct batch 2: .+\nllama\.cpp q4_0 batch 2: /m);
      expect(r.out).toMatch(/^\| +2 \| +\d+\.\d \| .+ Q[48]_0 \|/m);
    }
    expect(r.out).toMatch(/^constrained \/ unconstrained throughput: \d+\.\d\d×/m);
    expect(r.out).toMatch(/^ {2}1 client, 1 rows: ORT run \d+\.\d \+ engine host work \d+\.\d\d .+ = worker step interval \d+\.\d; client TPOT p50/m);
    expect(r.out).toMatch(/^ {4}\d+ decode steps, \d+ with prefill .+CPU ms per step: .*main thread \d+\.\d/m);
    // The device auto picks here; where webgpu runs (a software driver counts), its accuracy and decode-step table.
    expect(r.out).toMatch(/^device: (cpu|webgpu \(q4f16\)) — what the server's default KILN_DEVICE=auto would choose here: .+/m);
    if (/^webgpu: not available/m.test(r.out)) expect(r.out).toMatch(/^webgpu section skipped: webgpu is not available here/m);
    else {
      expect(r.out).toMatch(/^webgpu adapter: .+ \((software: numbers say nothing of GPU speed|hardware)\)$/m);
      expect(r.out).toMatch(/^accuracy: webgpu fp16 vs cpu fp32 next-token logits over a 32-token teacher-forced run, correlation min (0\.99\d+|1\.0000) \(bound 0\.9975: .+\), argmax \d+\/32$/m);
      expect(r.out).toMatch(/^accuracy: webgpu q4f16 vs cpu q4 next-token logits over a 32-token teacher-forced run, correlation min (0\.99\d+|1\.0000) \(bound 0\.99\d*: .+\), argmax \d+\/32$/m);
      expect(r.out).toMatch(/^accuracy: webgpu q4f16 vs cpu fp32 .+correlation min 0\.\d+ \(the CPU's own format: 0\.\d+\), argmax \d+\/32$/m);
      for (const rows of [1, 16]) expect(r.out).toMatch(new RegExp(`^\\| webgpu q4f16 \\| +${rows} \\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+ \\| +\\d+ \\|$`, "m"));
      expect(r.out).toMatch(/^transfer per decode step does not grow with context: yes$/m);
    }
  }, 300_000);

  test("npm run bench -- --stored (a quick run on the tiny preset) prints both rates, the table and the ratio", () => {
    const r = sh("npm run bench -- --stored", {
      KILN_BENCH_PRESET: "tiny", KILN_BENCH_ROUNDS: "1", KILN_BENCH_TOKENS: "16", KILN_BENCH_STORED_CLIENTS: "4", KILN_BENCH_MODELS: join(work, "bench-models"),
    });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: .+int8 kernels: /m);
    expect(r.out).toMatch(/^\| store: false +\| +\d+\.\d \| +16\.0 \|/m);
    expect(r.out).toMatch(/^\| store: true +\| +\d+\.\d \| +16\.0 \|/m);
    expect(r.out).toMatch(/^target store: true ≥ 0\.95× store: false at 4 clients: \d+\.\d\d× \((met|MISSED)\)$/m);
  }, 300_000);

  test("npm run bench -- --kv-join (two contexts) prints the CPU and a join's host work in place against a rebuild", () => {
    const r = sh("npm run bench -- --kv-join", { KILN_BENCH_KV_JOIN_COLUMNS: "64,141" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const columns of [64, 141]) expect(r.out).toMatch(new RegExp(`^\\| ${columns} +\\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+\\.\\d\\d \\| +\\d+× +\\|$`, "m"));
  }, 300_000);

  test("npm run bench -- --live-bus (a short run) prints the publish cost in process and over Redis, and the delivery time", () => {
    const r = sh("npm run bench -- --live-bus", { KILN_BENCH_LIVE_EVENTS: "600", KILN_BENCH_ROUNDS: "1" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const mode of ["in process \\(no Redis\\)", "Redis bus, no follower", "Redis bus, a follower"]) {
      for (const streams of [1, 16]) expect(r.out).toMatch(new RegExp(`^\\| ${mode}, ${streams} a step +\\| +\\d+\\.\\d \\| +\\d+\\.\\d \\| +\\d+\\.\\d \\|$`, "m"));
    }
    expect(r.out).toMatch(/^delivery to a follower on another connection, 600 events one a millisecond: p50 \d+\.\d µs, p99 \d+\.\d µs$/m);
  }, 300_000);

  test("npm run bench -- --input-rules prints /v1/status latency idle and while 4 MiB inputs are checked", () => {
    const r = sh("npm run bench -- --input-rules", { KILN_BENCH_INPUT_RULES_REQUESTS: "2" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^bodies of 3\.9\d MiB, \d+ items/m);
    for (const row of ["nothing \\(idle\\)", "POST /v1/responses, rule 2 broken at the end", "POST /v1/responses/input_tokens, valid"]) {
      expect(r.out).toMatch(new RegExp(`^\\| ${row} +\\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+\\.\\d \\|`, "m"));
    }
  }, 300_000);

  test("npm run bench -- --upload (a 16 MiB run) prints the server's RSS growth for the upload in its table", () => {
    const r = sh("npm run bench -- --upload", { KILN_BENCH_UPLOAD_MIB: "16" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    expect(r.out).toMatch(/^\| 16 MiB +\| +\d+\.\d \| +\d+ \| +\d+ \| +\d+\.\d \| +-?\d+\.\d \| < 64 MiB \|$/m);
  }, 300_000);

  test("npm run bench -- --upload-s3 (a 16 MiB run) prints throughput and RSS growth on disk and in the local S3 server", () => {
    const r = sh("npm run bench -- --upload-s3", { KILN_BENCH_UPLOAD_MIB: "16" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const store of ["disk", "s3"]) expect(r.out).toMatch(new RegExp(`^\\| ${store} +\\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+ \\| +-?\\d+\\.\\d \\| +\\d+ \\|$`, "m"));
  }, 300_000);
  test("npm run bench -- --file-burst (an 8 MB file, N = 1 and 5) prints RSS growth and /v1/status latency per N", () => {
    const r = sh("npm run bench -- --file-burst", { KILN_BENCH_FILE_MB: "8", KILN_BENCH_FILE_BURST: "1,5" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    expect(r.out).toMatch(/^a text file of 8000000 bytes/m);
    for (const n of [1, 5]) expect(r.out).toMatch(new RegExp(`^\\| ${n} +\\| +\\d+ \\| +\\d+\\.\\d\\d \\| +\\d+ \\| +\\d+ \\| +-?\\d+ \\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+\\.\\d \\| +\\d+\\.\\d \\|$`, "m"));
    expect(r.out).toMatch(/^targets at N = 5: RSS growth < 512 MiB/m);
  }, 300_000);
  test("npm run bench -- --media-decode prints /v1/status latency idle, while a video decodes in the worker, and on the event loop", () => {
    const r = sh("npm run bench -- --media-decode", { KILN_BENCH_MEDIA_SECONDS: "2" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^video: \d+\.\d MB H\.264 1280×720 30 fps \+ AAC, 2 s → 2 frames 768×432/m);
    for (const row of ["nothing \\(idle\\)", "decoding the video in the media worker", "control: the same decode on the event loop"]) {
      expect(r.out).toMatch(new RegExp(`^\\| ${row} +\\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+\\.\\d \\|`, "m"));
    }
    expect(r.out).toMatch(/^target: p99 under 50 ms while decoding in the worker: (met|MISSED)/m);
  }, 600_000);

  test("npm run bench -- --media (the tiny presets, one request a client) prints requests/s, TTFT and the encoders' share of prefill", () => {
    const r = sh("npm run bench -- --media", { KILN_BENCH_MEDIA_VISION: "tiny-vision", KILN_BENCH_MEDIA_AUDIO: "tiny-audio", KILN_BENCH_MEDIA_REQUESTS: "1" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const input of ["one 336×336 image", "10 s of audio"]) {
      for (const clients of [1, 4, 8]) {
        expect(r.out).toMatch(new RegExp(`^\\| ${input} +\\| +\\d+ \\| +${clients} \\| +${clients} \\| +\\d+\\.\\d\\d \\| +\\d+ \\| +\\d+ \\| +\\d+\\.\\d \\| +\\d+% \\|$`, "m"));
      }
    }
  }, 600_000);

  test("npm run bench -- --images (the tiny preset, one request a client, one round) prints images/min, the denoiser's share and kiln/direct", () => {
    const r = sh("npm run bench -- --images", { KILN_BENCH_IMAGE_PRESET: "tiny-image", KILN_BENCH_IMAGE_REQUESTS: "1", KILN_BENCH_IMAGE_ROUNDS: "1", KILN_BENCH_MODELS: join(work, "bench-models") });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const clients of [1, 4]) {
      expect(r.out).toMatch(new RegExp(`^\\| ${clients} +\\| +${clients} \\| +\\d+\\.\\d \\| +\\d+% \\| +\\d+ / \\d+ / \\d+ \\| +\\d+\\.\\d \\| +\\d+% \\| +\\d\\.\\d\\d \\|`, "m"));
    }
  }, 600_000);

  test("npm run bench -- --embeddings (the tiny preset, one request a client, one round) prints the CPU and inputs/s of kiln and the bare loop", () => {
    const r = sh("npm run bench -- --embeddings", { KILN_BENCH_EMBED_PRESET: "tiny-embed", KILN_BENCH_EMBED_REQUESTS: "1", KILN_BENCH_EMBED_ROUNDS: "1", KILN_BENCH_MODELS: join(work, "bench-models") });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const clients of [1, 16]) {
      expect(r.out).toMatch(new RegExp(`^\\| ${clients} +\\| +${clients * 8} \\| +\\d+ \\| +\\d+ \\| +\\d\\.\\d\\d \\|`, "m"));
    }
  }, 600_000);

  test("npm run bench -- --prefix (the tiny preset, 3 turns, 4 clients, one round) prints the CPU, every row of its table with figures, and its targets", () => {
    const r = sh("npm run bench -- --prefix", {
      KILN_BENCH_PRESET: "tiny", KILN_BENCH_ROUNDS: "1", KILN_BENCH_TOKENS: "8", KILN_BENCH_PREFIX_TURNS: "3", KILN_BENCH_PREFIX_CONVERSATIONS: "1", KILN_BENCH_PREFIX_CLIENTS: "4",
      KILN_BENCH_MODELS: join(work, "bench-models"),
    });
    if (r.code !== 0) throw new Error(r.out);
    // Every row with figures, the targets with verdicts (never asserted), what the cache did once it reports (prefix-output.ts).
    const problems = prefixOutputProblems(r.out, { turns: 3, clients: 4, levels: [1, 4] });
    if (problems.length) console.log(r.out);
    expect(problems).toEqual([]);
  }, 300_000);

  test("npm run bench -- --batch (the tiny preset, a real batch of 300 lines, one round) prints the CPU, every phase of its table with figures, and both targets", () => {
    const r = sh("npm run bench -- --batch", {
      KILN_BENCH_PRESET: "tiny", KILN_BENCH_ROUNDS: "1", KILN_BENCH_TOKENS: "8", KILN_BENCH_BATCH_LINES: "300",
      KILN_BENCH_MODELS: join(work, "bench-models"),
    });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const phase of ["interactive alone", "interactive beside the batch", "interactive, 16 clients"]) {
      expect(r.out).toMatch(new RegExp(`^\\| ${phase} +\\| +\\d+ \\|( +\\d+\\.\\d \\|){4}$`, "m"));
    }
    for (const phase of ["batch lane, no interactive", "batch lane, beside interactive"]) expect(r.out).toMatch(new RegExp(`^\\| ${phase} +\\| +batch \\|( +- \\|){3} +\\d+\\.\\d \\|$`, "m"));
    expect(r.out).toContain("one batch of 300 chat lines through /v1/batches");
    expect(r.out).toMatch(/^target TTFT p95 beside the batch ≤ 1\.25× alone: .*\d\.\d\d× \((met|MISSED)\)$/m);
    expect(r.out).toMatch(/^target batch throughput \(no interactive\) ≥ 0\.9× 16-client: .*\d\.\d\d× \((met|MISSED)\)$/m);
  }, 300_000);

  test("npm run bench -- --gguf (a tiny-shape Q8_0 file from the keyword, two levels, one round) prints the import, the table and the three targets", () => {
    const r = sh("npm run bench -- --gguf tiny-q8_0", {
      KILN_BENCH_ROUNDS: "1", KILN_BENCH_LEVELS: "1,2", KILN_BENCH_TOKENS: "8", KILN_BENCH_MODELS: join(work, "bench-models"),
    });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: .*; at the start load average \d+\.\d on \d+ cores/m);
    expect(r.out).toMatch(/kiln import \(kiln models import --force, formats int8, q4, q4f16\): \d+\.\d s, import process peak RSS \d+ MB$/m);
    for (const clients of [1, 2]) expect(r.out).toMatch(new RegExp(`^\\| +${clients} \\|( +\\d+\\.\\d \\| +\\d+\\.\\d \\| +\\d+\\.\\d\\d× \\|){2}( +\\d+ \\|){4}$`, "m"));
    expect(r.out).toMatch(/^peak RSS, prefix cache off: kiln server process \d+ MB \(\d+ MB after loading, before any request\); llama\.cpp child process \d+ MB/m);
    expect(r.out).toMatch(/^peak RSS, prefix cache on \(budget \d+ MiB per worker, the default\), the same requests: kiln \d+ MB; the cache's share -?\d+ MB/m);
    for (const target of ["kiln@1 ≥ 1.0× llama.cpp@1", "kiln@2 ≥ 1.5× llama.cpp@2", "kiln peak RSS (prefix cache off) ≤ 1.3× llama.cpp's"]) {
      expect(r.out).toMatch(new RegExp(`^target ${target.replace(/[.()]/g, "\\$&")}.*: \\d+\\.\\d\\d× \\((met|not met)\\)$`, "m"));
    }
  }, 300_000);

  test("npm run bench -- --cluster (4 clients, one round) prints the CPU, tokens/s with 1 and 3 replicas, and the limiter's cost", () => {
    const r = sh("npm run bench -- --cluster", { KILN_BENCH_CLUSTER_CLIENTS: "4", KILN_BENCH_CLUSTER_ROUNDS: "1", KILN_BENCH_CLUSTER_LIMITER_REQUESTS: "100" });
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toMatch(/^cpu: /m);
    for (const replicas of [1, 3]) expect(r.out).toMatch(new RegExp(`^\\| ${replicas} \\| \\d+\\.\\d \\| \\d+ \\| \\d+ \\| \\d+\\.\\d \\|`, "m"));
    expect(r.out).toMatch(/^shared limiter, .* added p50 -?\d+ µs, p99 -?\d+ µs$/m);
  }, 600_000);

  test("npm run cluster serves through haproxy with the key it prints; Ctrl-C drains it all and exits 0", async () => {
    const port = freePort();
    const cluster = await background(`npm run cluster -- --port ${port}`, /^API key: \S+$/m, {}, root, userEnv(), 300_000);
    const key = cluster.output().match(/^API key: (\S+)$/m)![1]!;
    expect(cluster.output()).toContain(`kiln cluster ready: http://127.0.0.1:${port} (haproxy)`);
    const chat = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "kiln-tiny-v1", messages: [{ role: "user", content: "Hello" }], max_tokens: 4 }),
    });
    expect(chat.status).toBe(200);
    const exited = new Promise<number | string | null>((resolve) => cluster.proc.once("exit", (code, signal) => resolve(code ?? signal)));
    // Ctrl-C reaches the whole group; npm itself may die of it, the launcher stops everything and reports.
    process.kill(-cluster.proc.pid!, "SIGINT");
    expect([0, "SIGINT"] as (number | string | null)[]).toContain(await exited);
    await waitFor(() => /^stopped; replicas exited with (\d+(, )?)+$/m.exec(cluster.output()), { what: "the launcher's last line", timeoutMs: 60_000 });
    expect(cluster.output()).toMatch(/^stopped; replicas exited with 0, 0, 0$/m);
  }, 400_000);

  test("npm run db:generate on an unchanged schema changes nothing", () => {
    const before = hashDir(join(root, "src", "db"));
    const r = sh("npm run db:generate");
    if (r.code !== 0) throw new Error(r.out);
    expect(r.out).toContain("No schema changes");
    expect(hashDir(join(root, "src", "db"))).toBe(before);
  }, 120_000);
});
