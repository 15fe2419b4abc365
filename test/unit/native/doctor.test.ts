// kiln doctor: the report and exit code (pure), and the real checks on this machine.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { doctorExitCode, formatDoctorReport, runDoctorChecks } from "../../../src/cli/doctor.ts";
import { checkDataDir, checkModelsDir, checkPostgres, checkSqlite, conciseError, type CheckResult } from "../../../src/native/doctor-checks.ts";
import { parseCpuInfo } from "../../../src/native/cpu.ts";
import { checkCpu, checkModelFormats } from "../../../src/native/doctor-cpu-checks.ts";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { freshPostgresDatabase } from "../../helpers/shared-postgres.ts";

const row = (name: string, status: CheckResult["status"], required = true, fix?: string): CheckResult => ({ name, required, status, detail: `${name} detail`, fix });

describe("formatDoctorReport", () => {
  test("a table, fixes for what failed or warned, and the verdict", () => {
    const text = formatDoctorReport(
      [row("data dir", "ok", true, "never shown"), row("sqlite", "fail", true, "use a local disk"), row("webgpu", "warn", false, "install mesa"), row("cuda", "skip", false, "not shipped")],
      "kiln doctor: test",
    );
    expect(text.split("\n")).toEqual([
      "kiln doctor: test",
      "",
      "check     status  detail",
      "--------  ------  ---------------",
      "data dir  ok      data dir detail",
      "sqlite    FAIL    sqlite detail",
      "webgpu    WARN    webgpu detail",
      "cuda      n/a     cuda detail",
      "",
      "How to fix:",
      "  sqlite: use a local disk",
      "  webgpu (optional): install mesa",
      "",
      "1 required check failed: sqlite. kiln will not serve reliably until it is fixed.",
    ]);
  });

  test("all green: no fix section", () => {
    const text = formatDoctorReport([row("a", "ok"), row("b", "skip", false)], "h");
    expect(text).not.toContain("How to fix");
    expect(text.endsWith("\nAll required checks passed.")).toBe(true);
  });

  test("plural verdict", () => {
    expect(formatDoctorReport([row("a", "fail"), row("b", "fail")], "h")).toContain("2 required checks failed: a, b. kiln will not serve reliably until they are fixed.");
  });
});

describe("doctorExitCode", () => {
  test("1 only when a required check did not pass", () => {
    expect(doctorExitCode([row("a", "ok"), row("b", "warn", false), row("c", "skip", false)])).toBe(0);
    expect(doctorExitCode([row("a", "ok"), row("b", "fail")])).toBe(1);
    expect(doctorExitCode([row("a", "warn")])).toBe(1);
  });
});

describe("conciseError", () => {
  test("keeps the sentence after ONNX Runtime's source path and assertion", () => {
    const raw =
      "Error: /onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters\nmore";
    expect(conciseError(raw)).toBe("Failed to get a WebGPU adapter: No supported adapters");
  });

  test("strips a bare source-path prefix and caps the length", () => {
    expect(conciseError("/a/b.cc:12 something broke")).toBe("something broke");
    expect(conciseError("x".repeat(500))).toHaveLength(160);
  });
});

describe("checks that fail say how to fix them", () => {
  const base = () => tempDir("kiln-doctor-");

  test("a data dir that cannot be created", async () => {
    const file = join(base(), "file");
    writeFileSync(file, "x");
    const r = await checkDataDir(join(file, "data"));
    expect(r.status).toBe("fail");
    expect(r.detail).toContain("ENOTDIR");
    expect(r.fix).toContain("--data-dir");
  });

  test("sqlite leaves no files behind", async () => {
    const dir = base();
    expect((await checkSqlite(dir)).status).toBe("ok");
    expect(readdirSync(dir)).toEqual([]);
  });

  test("postgres: connects, writes and reads back in a temporary table; a server not there fails with the fix", async () => {
    const url = await freshPostgresDatabase();
    const r = await checkPostgres(url);
    expect(r).toMatchObject({ name: "postgres", required: true, status: "ok" });
    expect(r.detail).toMatch(/^Postgres \d+\.\d+.*, database kiln_\d+: connect, write, read back$/);
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const down = await checkPostgres(`postgres://kiln:hunter2@127.0.0.1:${port}/kiln`);
    expect(down).toMatchObject({ status: "fail", required: true });
    expect(down.fix).toContain("KILN_DATABASE_URL");
    expect(JSON.stringify(down)).not.toContain("hunter2");
  });

  test("with a database URL, doctor checks Postgres instead of SQLite", async () => {
    const dataDir = tempDir("kiln-doctor-");
    const names = (await runDoctorChecks({ dataDir, modelsDir: join(dataDir, "models"), databaseUrl: await freshPostgresDatabase() })).map((r) => r.name);
    expect(names).toContain("postgres");
    expect(names).not.toContain("sqlite (WAL)");
  });

  test("a models dir with a broken folder is a warning naming it", async () => {
    const dir = base();
    mkdirSync(join(dir, "broken-model"));
    const r = await checkModelsDir(dir);
    expect(r.status).toBe("warn");
    expect(r.detail).toContain("broken-model");
    expect(r.detail).toStartWith("0 served (none yet); 1 skipped");
  });
});

describe("cpu and model formats", () => {
  const epyc = parseCpuInfo("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: avx2 fma\n");
  const vnni = parseCpuInfo("processor\t: 0\nmodel name\t: Xeon\nflags\t\t: avx2 fma avx512f avx512bw avx512_vnni\n");

  test("the cpu row names the model and the kernel-deciding flags", async () => {
    const r = await checkCpu(epyc);
    expect(r).toMatchObject({ name: "cpu", required: false, status: "ok" });
    expect(r.detail).toContain("AMD EPYC, 1 logical cores; avx2 fma; without avx512f avx512_vnni avx_vnni amx_int8");
  });

  test("a served int8 model of unknown weight range warns as inexact without VNNI, not with it", async () => {
    const dir = tempDir("kiln-doctor-");
    const m = writeFakeModel(dir, "third-party", fakeManifest("third-party-int8-v1", { dtypes: ["int8"], default_dtype: "int8" }));
    writeFileSync(join(m, "onnx", "model_int8.onnx"), "graph");
    writeFakeModel(dir, "plain", fakeManifest("plain-fp32-v1"));
    const r = await checkModelFormats(dir, epyc);
    expect(r.status).toBe("warn");
    expect(r.detail).toStartWith("third-party-int8-v1 (int8) is inexact here: int8 weights of unknown or full range");
    expect(r.detail).not.toContain("plain-fp32-v1");
    expect(r.fix).toContain("fp32 or q4");
    const ok = await checkModelFormats(dir, vnni);
    expect(ok.status).toBe("ok");
    expect(ok.detail).toContain("third-party-int8-v1 (int8): int8 on AVX-512 VNNI kernels");
  });
});

test("every required check passes on this machine, and cpu runs", async () => {
  const dataDir = tempDir("kiln-doctor-");
  const results = await runDoctorChecks({ dataDir, modelsDir: join(dataDir, "models") });
  const failed = results.filter((r) => r.required && r.status !== "ok");
  expect(failed).toEqual([]);
  expect(results.map((r) => r.name)).toEqual(
    expect.arrayContaining(["data dir", "sqlite (WAL)", "models dir", "native libraries", "onnxruntime session", "worker thread", "sharp (libvips)", "provider: cpu", "cpu", "model formats"]),
  );
  expect(results.find((r) => r.name === "worker thread")!.detail).toContain("transformers.js 4.3.1");
  // This project's machines have Mesa's lavapipe, and the probe's profile shows the kernel really ran on WebGPU.
  expect(results.find((r) => r.name === "adapters")).toMatchObject({ required: false, status: "ok" });
  expect(results.find((r) => r.name === "provider: webgpu")!.detail).toMatch(/^ran MatMul\+Add as \w+ on WebGpuExecutionProvider, output as expected$/);
  expect(results.find((r) => r.name === "provider: cpu")!.detail).toContain("on CPUExecutionProvider");
  expect(doctorExitCode(results)).toBe(0);
});
