// The bundling rewrites: each still matches the installed package (an upgrade that breaks one fails here first).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { applyRewrite, REWRITES } from "../../build/compile/plugin.ts";
import { preloadIsFirst } from "../../build/compile/entry-check.ts";

const NM = join(import.meta.dir, "..", "..", "node_modules");
const TARGETS: Record<string, string> = {
  "transformers.js createRequire load of onnxruntime-node": "@huggingface/transformers/dist/transformers.node.mjs",
  "onnxruntime-node platform binding": "onnxruntime-node/dist/binding.js",
  "sharp's locally built addon lookup": "sharp/dist/sharp.cjs",
};

describe("REWRITES against the installed packages", () => {
  for (const rewrite of REWRITES) {
    test(rewrite.why, async () => {
      const path = join(NM, TARGETS[rewrite.why]!);
      expect(rewrite.file.test(path)).toBe(true);
      const out = applyRewrite(await Bun.file(path).text(), rewrite, path);
      expect(out).toContain(rewrite.to);
      if (typeof rewrite.from === "string") expect(out).not.toContain(rewrite.from);
      else expect(new RegExp(rewrite.from, "g").test(out)).toBe(false);
    });
  }

  test("the binding rewrite names the linux-x64 addon that exists", async () => {
    expect(await Bun.file(join(NM, "onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node")).exists()).toBe(true);
  });
});

describe("applyRewrite", () => {
  const rw = { file: /x/, from: "a()", to: "b()", why: "test" };

  test("replaces every occurrence", () => {
    expect(applyRewrite("a(); a();", rw, "x.js")).toBe("b(); b();");
  });

  test("throws naming the file when the pattern is gone", () => {
    expect(() => applyRewrite("c();", rw, "/nm/pkg/x.js")).toThrow("compile plugin: test: pattern not found in /nm/pkg/x.js");
  });
});

describe("preloadIsFirst", () => {
  test("accepts the preload as the first import, after comments", () => {
    expect(preloadIsFirst('// entry\n/* why */\nimport "./native/preload.ts";\nimport { a } from "./a.ts";\n')).toBe(true);
    expect(preloadIsFirst("import './native/preload'\n")).toBe(true);
  });

  test("rejects it later, missing, or imported for a binding", () => {
    expect(preloadIsFirst('import { a } from "./a.ts";\nimport "./native/preload.ts";\n')).toBe(false);
    expect(preloadIsFirst('import { x } from "./native/preload.ts";\n')).toBe(false);
    expect(preloadIsFirst("console.log(1);\n")).toBe(false);
  });
});
