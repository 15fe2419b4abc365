// The native embedding on its own (no server): a small compiled entry runs sharp, ONNX Runtime and a worker.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../../build/compile.ts";
import { WORKER_ENTRIES } from "../../src/native/worker-url.ts";
import { runOnce } from "./binary-process.ts";

const work = mkdtempSync(join(tmpdir(), "kiln-native-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Report {
  compiled: boolean;
  runtime: { dir: string; paths: string[]; written: number } | null;
  results: { name: string; status: string; detail: string }[];
}

test("compiled alone in an empty folder, it unpacks the libraries once and every native check passes", async () => {
  await buildExecutable({ entrypoints: ["test/build/fixtures/native-entry.ts", WORKER_ENTRIES.doctor], outfile: join(work, "out", "kiln") });
  const dir = join(work, "run");
  mkdirSync(dir);
  copyFileSync(join(work, "out", "kiln"), join(dir, "kiln"));
  const runs: Report[] = [];
  for (let i = 0; i < 2; i++) {
    const { code, out } = await runOnce(dir, ["--data-dir", join(dir, "data")], dir);
    expect(code).toBe(0);
    runs.push(JSON.parse(out.trim().split("\n").at(-1)!) as Report);
  }
  const [first, again] = runs as [Report, Report];
  expect(first.compiled).toBe(true);
  for (const r of first.results) expect(`${r.name}: ${r.status}`).toBe(`${r.name}: ok`);
  expect(first.runtime!.dir.startsWith(join(dir, "data", "runtime"))).toBe(true);
  expect(first.runtime!.written).toBe(2);
  expect(again.runtime!.written).toBe(0);
  expect(again.runtime!.dir).toBe(first.runtime!.dir);
  expect(readdirSync(first.runtime!.dir).sort()).toEqual(["libonnxruntime.so.1", "libvips-cpp.so.8.18.7"]);
}, 90_000);
