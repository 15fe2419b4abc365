// The official-client chat, Responses and Messages tests again, on the webgpu device (KILN_DEVICE=webgpu: the tiny
// model's q4f16 graph on ONNX Runtime's webgpu EP, Mesa's software Vulkan driver where there is no GPU). The three
// tests that think for 1024+ tokens are left out here: on the software driver each costs minutes (a decode step is
// tens of milliseconds there, against one on the CPU path); they pass on it when run by hand (see the closing note).
import { expect, test } from "bun:test";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const FILES = ["test/sdk/openai.test.ts", "test/sdk/responses.test.ts", "test/sdk/anthropic.test.ts"];
const LONG_THINKING = /^(?!reasoning.{1,3}lower effort|reasoning.{1,3}store false|messages.{1,3}thinking gives)/;

test("the SDK tests pass with KILN_DEVICE=webgpu", async () => {
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "300000", "-t", LONG_THINKING.source, ...FILES], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, KILN_DEVICE: "webgpu" },
  });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const report = `${out}${err}`;
  const count = (word: string) => Number(report.match(new RegExp(`^ *(\\d+) ${word}$`, "m"))?.[1] ?? -1);
  if (code !== 0) throw new Error(report.split("\n").filter((l) => !l.startsWith("Warning:")).slice(-80).join("\n"));
  expect(count("fail")).toBe(0);
  expect(count("filtered out")).toBe(3);
  expect(count("pass")).toBeGreaterThanOrEqual(25);
}, 900_000);
