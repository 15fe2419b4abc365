// The import-cycle checker itself, on small trees with known cycles: it must see every kind of import and fail.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildImportGraph, findCycles, specifiersOf } from "../../helpers/import-graph.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** Writes `files` (path → source) under a fresh temp dir and returns it. */
function tree(files: Record<string, string>): string {
  const root = tempDir("kiln-graph-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("specifiersOf", () => {
  test("finds static, type-only, re-export, require, dynamic, import-type and worker-URL specifiers, and nothing else", () => {
    const text = [
      'import { a } from "./a.ts";',
      'import type { B } from "./b.ts";',
      'export { c } from "./c.ts";',
      'export * from "./d.ts";',
      'import e = require("./e.ts");',
      'const f = await import("./f.ts");',
      'let g: import("./g.ts").G;',
      'const h = new URL("./h.ts", import.meta.url);',
      'const notAWorker = new URL("./i.ts", "http://x");',
      'const notAnImport = "./j.ts"; await import(notAnImport);',
      'import "elysia";',
    ].join("\n");
    expect(specifiersOf("x.ts", text)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts", "./h.ts", "elysia"]);
  });
});

describe("findCycles", () => {
  test("a tree without cycles has none", () => {
    const root = tree({
      "src/a.ts": 'import { b } from "./b.ts"; import "elysia"; import data from "./data.json";',
      "src/b.ts": 'import { c } from "./lib/c.ts";',
      "src/lib/c.ts": "export const c = 1;",
      "src/data.json": "{}",
      "workers/w.ts": 'import { a } from "../src/a.ts";',
    });
    const graph = buildImportGraph(root, ["src", "workers"]);
    expect(graph.get("workers/w.ts")).toEqual(["src/a.ts"]);
    expect(graph.get("src/a.ts")).toEqual(["src/b.ts"]);
    expect(findCycles(graph)).toEqual([]);
  });

  test("lists every cycle as a closed chain, whatever kind of import closes it, across src and workers", () => {
    const root = tree({
      // a three-file circle closed by a type-only import and a re-export
      "src/core/request.ts": 'import { loop } from "./loop.ts";',
      "src/core/loop.ts": 'export { search } from "../tools/search.ts";',
      "src/tools/search.ts": 'import type { Request } from "../core/request.ts";',
      // two files that name each other, one by a dynamic import
      "src/api/assembler.ts": 'import { item } from "./items.ts";',
      "src/api/items.ts": 'const m = await import("./assembler.ts");',
      // a worker entry point named by URL, importing its spawner back (extensionless)
      "src/pool.ts": 'const url = new URL("../workers/entry.ts", import.meta.url);',
      "workers/entry.ts": 'import { pool } from "../src/pool";',
      // a file importing itself
      "src/self.ts": 'export * from "./self.ts";',
      // not part of any cycle, though it imports into one
      "src/main.ts": 'import { loop } from "./core/loop.ts";',
    });
    const chains = findCycles(buildImportGraph(root, ["src", "workers"])).map((c) => c.join(" → "));
    expect(chains).toEqual([
      "src/api/assembler.ts → src/api/items.ts → src/api/assembler.ts",
      "src/core/loop.ts → src/tools/search.ts → src/core/request.ts → src/core/loop.ts",
      "src/pool.ts → workers/entry.ts → src/pool.ts",
      "src/self.ts → src/self.ts",
    ]);
  });

  test("two cycles sharing a file are both listed", () => {
    const root = tree({
      "src/hub.ts": 'import "./left.ts"; import "./right.ts";',
      "src/left.ts": 'import "./hub.ts";',
      "src/right.ts": 'import "./hub.ts";',
    });
    expect(findCycles(buildImportGraph(root, ["src"])).map((c) => c.join(" → "))).toEqual([
      "src/hub.ts → src/left.ts → src/hub.ts",
      "src/hub.ts → src/right.ts → src/hub.ts",
    ]);
  });
});
