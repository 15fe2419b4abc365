// Build-time checks: native linkage of the embedded libraries, and what may not be bundled.
import { describe, expect, test } from "bun:test";
import { readdirSync, realpathSync } from "node:fs";
import { join, relative } from "node:path";
import { devOnlyPackages, forbiddenInputs, linkageProblems } from "../../build/compile/checks.ts";
import { NATIVE_LIBRARIES } from "../../src/native/preload.ts";

// Its real path: the preload names the libraries by theirs, so a node_modules that is a symlink (a worktree's) reads the same.
const NM = realpathSync(join(import.meta.dir, "..", "..", "node_modules"));
const sharpLib = join(NM, "@img", "sharp-linux-x64", "lib");
const addonPaths = [
  ...readdirSync(sharpLib).filter((f) => f.endsWith(".node")).map((f) => join(sharpLib, f)),
  join(NM, "onnxruntime-node", "bin", "napi-v6", "linux", "x64", "onnxruntime_binding.node"),
];
const load = async (p: string) => ({ name: relative(NM, p), bytes: await Bun.file(p).bytes() });

describe("linkageProblems", () => {
  test("none for the libraries the preload embeds and the installed addons", async () => {
    const libs = await Promise.all(NATIVE_LIBRARIES.map(async (l) => ({ ...(await load(l.source)), soname: l.soname })));
    expect(linkageProblems(libs, await Promise.all(addonPaths.map(load)))).toEqual([]);
  });

  test("names a wrong SONAME and an addon whose library is not embedded", async () => {
    const ortLib = NATIVE_LIBRARIES.find((l) => l.soname === "libonnxruntime.so.1")!;
    const libs = [{ ...(await load(ortLib.source)), soname: "libonnxruntime.so.2" }];
    const problems = linkageProblems(libs, await Promise.all(addonPaths.map(load)));
    expect(problems).toContain("onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1: SONAME is libonnxruntime.so.1, the preload expects libonnxruntime.so.2");
    expect(problems.some((p) => /sharp-linux-x64-.*\.node needs libvips-cpp\.so\.[\d.]+, which is not embedded/.test(p))).toBe(true);
    expect(problems).toContain("onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node needs libonnxruntime.so.1, which is not embedded");
  });
});

describe("devOnlyPackages / forbiddenInputs", () => {
  const pkg = { dependencies: { sharp: "1", elysia: "1" }, devDependencies: { openai: "1", "@anthropic-ai/sdk": "1", sharp: "1" } };

  test("dev dependencies that are not also runtime dependencies", () => {
    expect(devOnlyPackages(pkg).sort()).toEqual(["@anthropic-ai/sdk", "openai"]);
  });

  test("flags tests, benchmarks and dev-only packages; keeps the rest", () => {
    const inputs = [
      "src/main.ts",
      "workers/inference-worker.ts",
      "test/helpers/kiln.ts",
      "src/foo.test.ts",
      "bench/chat.load.ts",
      "node_modules/openai/index.mjs",
      "node_modules/@anthropic-ai/sdk/index.mjs",
      "node_modules/elysia/dist/index.mjs",
      "node_modules/some-lib/node_modules/openai/x.js",
      "node_modules/jest-like/test/thing.js",
    ];
    expect(forbiddenInputs(inputs, devOnlyPackages(pkg))).toEqual([
      "test/helpers/kiln.ts",
      "src/foo.test.ts",
      "bench/chat.load.ts",
      "node_modules/openai/index.mjs",
      "node_modules/@anthropic-ai/sdk/index.mjs",
    ]);
  });

  test("flags build tooling; the model builder the server runs lives in src/modelgen and is kept", () => {
    const inputs = ["src/modelgen/index.ts", "src/modelgen/corpus/prose.txt", "build/model/main.ts", "build/migrations-module.ts", "node_modules/x/build/index.js"];
    expect(forbiddenInputs(inputs, [])).toEqual(["build/model/main.ts", "build/migrations-module.ts"]);
  });
});
