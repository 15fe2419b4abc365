// `bun run build`: compiles kiln (server, CLI, workers, migrations, docs UI, native libraries) into dist/kiln.
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { NATIVE_LIBRARIES } from "../src/native/preload.ts";
import { WORKER_ENTRIES } from "../src/native/worker-url.ts";
import { devOnlyPackages, forbiddenInputs, linkageProblems } from "./compile/checks.ts";
import { nativeBundlePlugin } from "./compile/plugin.ts";
import { preloadIsFirst } from "./compile/entry-check.ts";

const ROOT = resolve(import.meta.dir, "..");
const NODE_MODULES = join(ROOT, "node_modules");

export interface CompileResult {
  outfile: string;
  bytes: number;
  ms: number;
  /** Source files bundled, relative to the project root. */
  inputs: string[];
  sha256: string;
}

function addonFiles(): string[] {
  const sharpLib = join(NODE_MODULES, "@img", "sharp-linux-x64", "lib");
  return [
    ...readdirSync(sharpLib).filter((f) => f.endsWith(".node")).map((f) => join(sharpLib, f)),
    join(NODE_MODULES, "onnxruntime-node", "bin", "napi-v6", "linux", "x64", "onnxruntime_binding.node"),
  ];
}

/** Everything that would make the executable fail where the build could have known: checked before bundling. */
async function preflight(entry: string): Promise<void> {
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`kiln embeds linux-x64 native libraries; this is ${process.platform}-${process.arch}`);
  const libs = await Promise.all(
    NATIVE_LIBRARIES.map(async (l) => ({ name: relative(ROOT, l.source), soname: l.soname, bytes: await Bun.file(l.source).bytes() })),
  );
  const addons = await Promise.all(addonFiles().map(async (f) => ({ name: relative(ROOT, f), bytes: await Bun.file(f).bytes() })));
  const problems = linkageProblems(libs, addons);
  if (!preloadIsFirst(await Bun.file(entry).text())) {
    problems.push(`${relative(ROOT, entry)} must import "./native/preload.ts" before anything else (it loads the native libraries sharp and ONNX Runtime need)`);
  }
  if (problems.length) throw new Error(`cannot build:\n  ${problems.join("\n  ")}`);
}

/** Bun.build with everything the executable needs; `entrypoints` are paths under the project root. */
export async function buildExecutable(opts: { entrypoints: string[]; outfile: string }): Promise<{ inputs: string[] }> {
  const result = await Bun.build({
    // Failures come back in result.logs, so they can be printed in full.
    throw: false,
    entrypoints: opts.entrypoints.map((e) => resolve(ROOT, e)),
    // The project root, so a worker's path inside the executable is the one worker-url.ts names.
    root: ROOT,
    compile: { outfile: opts.outfile, autoloadDotenv: false, autoloadBunfig: false },
    // Identifiers stay: Elysia reads handler source to see which context fields a route uses.
    minify: { whitespace: true, syntax: true, identifiers: false },
    // Embedded in the executable: stack traces name the TypeScript files and lines.
    sourcemap: "linked",
    metafile: true,
    plugins: [nativeBundlePlugin(NODE_MODULES)],
  });
  if (!result.success) throw new Error(`bun build failed:\n${result.logs.map((l) => `  ${String(l)}`).join("\n")}`);
  return { inputs: Object.keys(result.metafile?.inputs ?? {}) };
}

export async function compileKiln(opts: { outfile?: string } = {}): Promise<CompileResult> {
  const started = performance.now();
  const outfile = resolve(opts.outfile ?? join(ROOT, "dist", "kiln"));
  const entry = join(ROOT, "src", "main.ts");
  await preflight(entry);
  const { inputs } = await buildExecutable({ entrypoints: [entry, ...Object.values(WORKER_ENTRIES)], outfile });
  const forbidden = forbiddenInputs(inputs, devOnlyPackages(pkg));
  if (forbidden.length) throw new Error(`the executable would contain dev-only code:\n  ${forbidden.join("\n  ")}`);
  const sha256 = new Bun.CryptoHasher("sha256").update(await Bun.file(outfile).arrayBuffer()).digest("hex");
  return { outfile, bytes: Bun.file(outfile).size, ms: performance.now() - started, inputs, sha256 };
}

if (import.meta.main) {
  try {
    const r = await compileKiln({ outfile: process.argv[2] });
    console.log(`built ${relative(process.cwd(), r.outfile)}: ${r.bytes} bytes (${(r.bytes / 1024 / 1024).toFixed(1)} MiB), ${r.inputs.length} source files, ${(r.ms / 1000).toFixed(1)} s\n  sha256 ${r.sha256}`);
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  }
}
