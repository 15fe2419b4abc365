// No import cycles in src/ and workers/: the whole tree, every kind of import (see test/helpers/import-graph.ts).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { buildImportGraph, findCycles } from "../../helpers/import-graph.ts";

const ROOT = join(import.meta.dir, "../../..");

test("src/ and workers/ have no import cycles", () => {
  const graph = buildImportGraph(ROOT, ["src", "workers"]);
  // the walk really saw the tree (an empty graph would pass trivially)
  expect(graph.get("src/main.ts")?.length).toBeGreaterThan(0);
  expect(graph.has("workers/inference-worker.ts")).toBe(true);
  expect(findCycles(graph).map((chain) => chain.join(" → "))).toEqual([]);
});
