// Bun.build plugin that makes sharp and onnxruntime-node bundle into one executable (see notes/stack-facts.md).
import type { BunPlugin } from "bun";
import { dirname, join } from "node:path";

/** A source rewrite that must match: an upgrade that changes the code fails the build instead of the binary. */
export interface Rewrite {
  file: RegExp;
  from: string | RegExp;
  to: string;
  why: string;
}

export const REWRITES: Rewrite[] = [
  {
    // transformers.js loads onnxruntime-node through createRequire(import.meta.url), which the bundler cannot
    // follow: the addon would be missing from the executable. A plain require is bundled.
    file: /@huggingface[\\/]transformers[\\/]dist[\\/]transformers\.node\.mjs$/,
    from: /\brequireFromHere\("onnxruntime-node"\)/,
    to: 'require("onnxruntime-node")',
    why: "transformers.js createRequire load of onnxruntime-node",
  },
  {
    // A template-literal require embeds nothing; name the one binding this executable runs (linux-x64).
    file: /onnxruntime-node[\\/]dist[\\/]binding\.js$/,
    from: "require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`)",
    to: 'require("../bin/napi-v6/linux/x64/onnxruntime_binding.node")',
    why: "onnxruntime-node platform binding",
  },
  {
    // sharp first tries a locally compiled addon at a cwd-relative path: in the executable that would load
    // whatever file sits at ../src/build/Release under the working directory. Skip straight to the prebuilt one.
    file: /sharp[\\/]dist[\\/]sharp\.cjs$/,
    from: /require\(`\.\.\/src\/build\/Release\/sharp-[^`]*\.node`\)/,
    to: "undefined",
    why: "sharp's locally built addon lookup",
  },
];

/** Applies one rewrite; throws when the pattern is gone so the build stops with the reason. */
export function applyRewrite(source: string, rewrite: Rewrite, path: string): string {
  const found = typeof rewrite.from === "string" ? source.includes(rewrite.from) : rewrite.from.test(source);
  if (!found) throw new Error(`compile plugin: ${rewrite.why}: pattern not found in ${path} (did the package change?)`);
  return typeof rewrite.from === "string" ? source.split(rewrite.from).join(rewrite.to) : source.replace(new RegExp(rewrite.from, "g"), rewrite.to);
}

export function nativeBundlePlugin(nodeModules: string): BunPlugin {
  return {
    name: "kiln-native",
    setup(build) {
      // sharp's ESM entry loads its addon through createRequire; its CJS entry uses plain requires the bundler follows.
      build.onResolve({ filter: /^sharp$/ }, () => ({ path: join(nodeModules, "sharp", "dist", "index.cjs") }));
      for (const rewrite of REWRITES) {
        build.onLoad({ filter: rewrite.file }, async ({ path }) => {
          const text = await Bun.file(path).text();
          return { contents: applyRewrite(text, rewrite, path), loader: "js", resolveDir: dirname(path) };
        });
      }
    },
  };
}
