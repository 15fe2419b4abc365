// The layers import downward only: the main thread and the workers meet in src/protocol/; the core, the live
// responses and model building import no API family; the protocols carry types only. Type-only imports are free
// (they leave nothing at run time); spawning a worker by URL is not an import of its code.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = join(import.meta.dir, "..", "..", "..");

/** What the workers may run from src/, each with why it is shared rather than sent over a protocol. */
const WORKERS_MAY_RUN: [string, string][] = [
  ["src/protocol/", "what both sides agree on"],
  ["src/modelgen/", "the device path writes its KV and pixel graphs with the model builder's ONNX writer"],
  ["src/media/decode/", "the media worker runs the decoders the main thread's intake names"],
  ["src/media/types.ts", "the decoded media's shapes, as the decoders return them"],
  ["src/devices/device-turns.ts", "the GPU turn table lives in shared memory that every webgpu worker takes turns in"],
  ["src/models/manifest.ts", "a worker reads its model folder's kiln.json as the registry does"],
  ["src/models/step-formats.ts", "the small-step format's facts, the same on both sides"],
  ["src/native/worker-url.ts", "a worker that starts its own helper worker finds its file as the main thread does"],
];

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function* tsFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* tsFiles(path);
    else if (name.endsWith(".ts")) yield path;
  }
}

/** A file's relative imports and re-exports, resolved to repo paths, with whether each is type-only. */
function edgesOf(file: string, text: string): Edge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: Edge[] = [];
  for (const st of source.statements) {
    if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const spec = st.moduleSpecifier.text;
    if (!spec.startsWith(".")) continue;
    let typeOnly: boolean;
    if (ts.isImportDeclaration(st)) {
      const c = st.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : null;
      typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else typeOnly = st.isTypeOnly;
    edges.push({ from: file, to: relative(ROOT, resolve(ROOT, dirname(file), spec)), typeOnly });
  }
  return edges;
}

const ALL: Edge[] = ["src", "workers"].flatMap((top) =>
  [...tsFiles(join(ROOT, top))].flatMap((abs) => edgesOf(relative(ROOT, abs), readFileSync(abs, "utf8"))),
);
const shown = (e: Edge) => `${e.from} → ${e.to}`;

test("the rules see a value import, and let a type-only one pass", () => {
  const text = `import type { A } from "../protocol/text.ts";\nimport { type B, c } from "../../workers/x.ts";\nexport { d } from "./y.ts";`;
  expect(edgesOf("src/inference/f.ts", text)).toEqual([
    { from: "src/inference/f.ts", to: "src/protocol/text.ts", typeOnly: true },
    { from: "src/inference/f.ts", to: "workers/x.ts", typeOnly: false },
    { from: "src/inference/f.ts", to: "src/inference/y.ts", typeOnly: false },
  ]);
});

test("the main thread imports nothing from workers/", () => {
  expect(ALL.filter((e) => e.from.startsWith("src/") && e.to.startsWith("workers/")).map(shown)).toEqual([]);
});

test("the workers run from src/ only the protocols and the few shared pieces listed here", () => {
  const allowed = (to: string) => WORKERS_MAY_RUN.some(([p]) => (p.endsWith("/") ? to.startsWith(p) : to === p));
  expect(ALL.filter((e) => e.from.startsWith("workers/") && e.to.startsWith("src/") && !e.typeOnly && !allowed(e.to)).map(shown)).toEqual([]);
});

test("the protocols carry types: they run nothing from outside src/protocol/", () => {
  expect(ALL.filter((e) => e.from.startsWith("src/protocol/") && !e.to.startsWith("src/protocol/") && !e.typeOnly).map(shown)).toEqual([]);
});

test("the core, the live responses, model building and the scheduler import no API family", () => {
  const lower = ["src/inference/", "src/live/", "src/modelgen/", "src/scheduler/", "src/protocol/"];
  expect(ALL.filter((e) => lower.some((l) => e.from.startsWith(l)) && e.to.startsWith("src/api/")).map(shown)).toEqual([]);
});
