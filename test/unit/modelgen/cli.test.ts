// `kiln models build` argument parsing, progress formatting, and an end-to-end tiny build through the command.
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelsBuildCommand, parseBuildArgs } from "../../../src/modelgen/cli.ts";
import { formatProgress, progressReporter } from "../../../src/modelgen/progress.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-build-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("parseBuildArgs", () => {
  test("reads flags in both forms, with defaults", () => {
    expect(parseBuildArgs(["--preset", "qwen2-0.5b", "--dtype=fp32,q4", "--out", "/m", "--seed", "7", "--force"])).toEqual({
      preset: "qwen2-0.5b", dtypes: ["fp32", "q4"], defaultDtype: undefined, out: "/m", seed: 7, force: true,
    });
    expect(parseBuildArgs(["--preset=tiny"])).toEqual({ preset: "tiny", dtypes: ["fp32"], defaultDtype: undefined, out: "./models", seed: undefined, force: false });
    expect(parseBuildArgs(["--preset", "tiny", "--dtype", "fp32,q4", "--default-dtype", "q4"])).toMatchObject({ defaultDtype: "q4" });
  });

  test("explains bad input", () => {
    expect(parseBuildArgs([])).toEqual({ error: "--preset is required" });
    expect(parseBuildArgs(["--preset", "huge"])).toMatchObject({ error: expect.stringContaining('unknown preset "huge"') });
    expect(parseBuildArgs(["--preset", "tiny", "--dtype", "bf16"])).toMatchObject({ error: expect.stringContaining("--dtype must list") });
    expect(parseBuildArgs(["--preset", "tiny", "--seed", "-1"])).toMatchObject({ error: expect.stringContaining("--seed") });
    expect(parseBuildArgs(["--preset", "tiny", "--dtype", "fp32", "--default-dtype", "q4"])).toMatchObject({ error: expect.stringContaining("--default-dtype") });
    expect(parseBuildArgs(["--preset"])).toEqual({ error: "--preset needs a value" });
    expect(parseBuildArgs(["--colour", "red"])).toEqual({ error: "unknown flag --colour" });
    expect(parseBuildArgs(["tiny"])).toEqual({ error: 'unexpected argument "tiny"' });
    expect(parseBuildArgs(["--preset", "tiny-omni", "--gguf", "f32"])).toEqual({ error: '--gguf is for text presets; "tiny-omni" has media encoders' });
  });

  test("lists the media presets", () => {
    for (const p of ["tiny-vision", "tiny-audio", "tiny-omni", "vision-small", "audio-small"]) expect(parseBuildArgs(["--preset", p])).toMatchObject({ preset: p });
  });

  test("image presets take fp32 only and no GGUF", () => {
    for (const p of ["tiny-image", "image-small"]) expect(parseBuildArgs(["--preset", p])).toMatchObject({ preset: p, dtypes: ["fp32"] });
    expect(parseBuildArgs(["--preset", "tiny-image", "--dtype", "fp32"])).toMatchObject({ dtypes: ["fp32"] });
    expect(parseBuildArgs(["--preset", "tiny-image", "--dtype", "q4"])).toEqual({ error: '"tiny-image" is an image preset: it is built in fp32 only (got --dtype q4)' });
    expect(parseBuildArgs(["--preset", "image-small", "--dtype", "fp32,int8"])).toMatchObject({ error: expect.stringContaining("built in fp32 only") });
    expect(parseBuildArgs(["--preset", "tiny-image", "--gguf", "f32"])).toEqual({ error: '--gguf is for text presets; "tiny-image" is an image model' });
    expect(parseBuildArgs(["--preset", "nope"])).toMatchObject({ error: expect.stringContaining("tiny-image, image-small") });
  });

  test("embedding presets take fp32 only and no GGUF", () => {
    for (const p of ["tiny-embed", "embed-small"]) expect(parseBuildArgs(["--preset", p])).toMatchObject({ preset: p, dtypes: ["fp32"] });
    expect(parseBuildArgs(["--preset", "tiny-embed", "--dtype", "q4"])).toEqual({ error: '"tiny-embed" is an embedding preset: it is built in fp32 only (got --dtype q4)' });
    expect(parseBuildArgs(["--preset", "tiny-embed", "--gguf", "f32"])).toEqual({ error: '--gguf is for text presets; "tiny-embed" is an embedding model' });
  });
});

describe("progress", () => {
  test("formatProgress draws a proportional bar", () => {
    expect(formatProgress(50, 200, "x", 8)).toBe("[##......]  25%  50/200 params  x");
    expect(formatProgress(494_032_768, 494_032_768, "done", 4)).toBe("[####] 100%  494.0M/494.0M params  done");
  });

  test("non-TTY prints at each 10% step and at the end; TTY redraws in place", () => {
    const lines: string[] = [];
    let t = 0;
    const report = progressReporter({ tty: false, write: (s) => lines.push(s), now: () => t });
    for (let i = 1; i <= 100; i++) report(i, 100, "w");
    expect(lines.length).toBe(11);
    expect(lines.at(-1)).toStartWith("[##############################] 100%");
    const out: string[] = [];
    const tty = progressReporter({ tty: true, write: (s) => out.push(s), now: () => (t += 150) });
    tty(1, 2, "a");
    tty(2, 2, "b");
    expect(out[0]).toStartWith("\r[");
    expect(out[1]).toEndWith("\n");
  });
});

describe("modelsBuildCommand", () => {
  test("builds a preset into the models dir, then reports it intact; bad flags exit 2", async () => {
    const quiet = [spyOn(console, "log"), spyOn(console, "error"), spyOn(process.stdout, "write")].map((s) => s.mockImplementation(() => true as never));
    afterAll(() => quiet.forEach((s) => s.mockRestore()));
    expect(await modelsBuildCommand(["--preset", "tiny", "--out", root])).toBe(0);
    expect(existsSync(join(root, "kiln-tiny-v1", "onnx", "model.onnx"))).toBe(true);
    expect(await modelsBuildCommand(["--preset", "tiny", "--out", root])).toBe(0);
    expect(await modelsBuildCommand(["--preset", "nope"])).toBe(2);
    expect(await modelsBuildCommand(["--preset", "tiny-vision", "--out", root])).toBe(0);
    expect(existsSync(join(root, "kiln-tiny-vision-v1", "onnx", "vision_encoder.onnx"))).toBe(true);
    expect(await modelsBuildCommand(["--preset", "tiny-image", "--out", root])).toBe(0);
    expect(await modelsBuildCommand(["--preset", "tiny-image", "--out", root])).toBe(0);
    for (const graph of ["text_encoder", "unet", "vae_decoder", "vae_encoder"]) expect(existsSync(join(root, "kiln-tiny-image-v1", graph, "model.onnx"))).toBe(true);
    expect(await modelsBuildCommand(["--preset", "tiny-image", "--dtype", "int8", "--out", root])).toBe(2);
    const said = (quiet[0]!.mock.calls as unknown[][]).map((c) => String(c[0]));
    expect(said[0]).toStartWith("built kiln-tiny-v1 (fp32)");
    expect(said[1]).toStartWith("kiln-tiny-v1 is already built and intact");
    expect(said[3]).toStartWith("built kiln-tiny-image-v1 (fp32)");
    expect(said[4]).toStartWith("kiln-tiny-image-v1 is already built and intact");
    const errors = (quiet[1]!.mock.calls as unknown[][]).map((c) => String(c[0]));
    expect(errors.at(-1)).toStartWith('kiln models build: "tiny-image" is an image preset: it is built in fp32 only (got --dtype int8)');
    quiet.forEach((s) => s.mockRestore());
  });
});
