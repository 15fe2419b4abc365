// `kiln models build --gguf`: the flag's parsing, and GGUF files written beside the model folder (which the registry skips).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelsBuildCommand, parseBuildArgs } from "../../../src/modelgen/cli.ts";
import { ggufFileName } from "../../../src/modelgen/gguf-install.ts";
import { PRESETS } from "../../../src/modelgen/index.ts";
import { readGgufMetadata } from "../../../src/modelgen/gguf-read.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-gguf-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("--gguf takes a list of formats; without it no GGUF is asked for", () => {
  expect(parseBuildArgs(["--preset", "tiny", "--gguf", "Q4_0, q8_0,q4_0"])).toMatchObject({ gguf: ["q4_0", "q8_0"] });
  expect((parseBuildArgs(["--preset", "tiny"]) as { gguf?: unknown }).gguf).toBeUndefined();
  expect(parseBuildArgs(["--preset", "tiny", "--gguf", "q5_k"])).toMatchObject({ error: expect.stringContaining("--gguf must list f32, q8_0, q4_0") });
  expect(parseBuildArgs(["--preset", "tiny", "--gguf"])).toEqual({ error: "--gguf needs a value" });
});

test("models build --gguf writes the ONNX folder and one GGUF file per format", async () => {
  const log = console.log;
  console.log = () => {};
  try {
    expect(await modelsBuildCommand(["--preset", "tiny", "--out", root, "--gguf", "q8_0,f32"])).toBe(0);
  } finally {
    console.log = log;
  }
  const spec = PRESETS.tiny!;
  expect(readdirSync(root).sort()).toEqual([spec.id, ggufFileName(spec, "f32"), ggufFileName(spec, "q8_0")].sort());
  expect(readGgufMetadata(join(root, ggufFileName(spec, "f32"))).kv.get("general.file_type")).toBe(0);
});
