// kiln --version: exact layout from fixed input, and the real versions of the pieces installed here.
import { expect, test } from "bun:test";
import { formatVersions, versionText } from "../../../src/cli/version.ts";
import pkg from "../../../package.json" with { type: "json" };

test("formatVersions: the kiln line first, then aligned components", () => {
  const text = formatVersions({
    kiln: "1.2.3", bun: "1.4.5", bunRevision: "abcdef012", onnxruntime: "1.30.0", transformers: "4.3.1",
    sharp: "0.35.5", libvips: "8.18.7", platform: "linux-x64", compiled: true,
  });
  expect(text).toBe(
    [
      "kiln 1.2.3",
      "  bun              1.4.5 (abcdef012)",
      "  onnxruntime      1.30.0 (onnxruntime-node, CPU)",
      "  transformers.js  4.3.1",
      "  sharp            0.35.5 (libvips 8.18.7)",
      "  platform         linux-x64, single executable",
    ].join("\n"),
  );
});

test("versionText reports the installed versions", () => {
  const text = versionText();
  expect(text.split("\n")[0]).toBe(`kiln ${pkg.version}`);
  expect(text).toContain(`bun              ${Bun.version}`);
  expect(text).toContain(`onnxruntime      ${pkg.dependencies["onnxruntime-node"]}`);
  expect(text).toContain(`transformers.js  ${pkg.dependencies["@huggingface/transformers"]}`);
  expect(text).toMatch(new RegExp(`sharp +${pkg.dependencies.sharp.replace(/\./g, "\\.")} \\(libvips \\d+\\.\\d+\\.\\d+\\)`));
  expect(text).toContain("from source");
});
