// Builds the import graph of a tree of .ts files with the TypeScript parser and finds its cycles (as file chains).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/** file (path relative to the root, "/"-separated) → the files it imports, in source order. */
export type ImportGraph = Map<string, string[]>;

/**
 * The module specifiers a source file names: static imports (type-only too), re-exports, `import x = require()`,
 * `import("…")` calls and types with a literal, and `new URL("…", import.meta.url)` (worker entry points).
 */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const literal = (node: ts.Node | undefined): void => {
    if (node && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    else if (ts.isNewExpression(node) && isImportMetaUrl(node)) literal(node.arguments?.[0]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `new URL(x, import.meta.url)`: how a module names a file next to it (a worker entry point). */
function isImportMetaUrl(node: ts.NewExpression): boolean {
  const base = node.arguments?.[1];
  return (
    ts.isIdentifier(node.expression) && node.expression.text === "URL" && base !== undefined && ts.isPropertyAccessExpression(base) &&
    base.name.text === "url" && ts.isMetaProperty(base.expression) && base.expression.name.text === "meta"
  );
}

/** Every .ts file under `dir`, recursively (a folder that is not there throws: a misspelt root must not pass). */
function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFilesUnder(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** The .ts file a relative specifier names (as written, `.js` written for `.ts`, no extension, or a folder's index). */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => c.endsWith(".ts") && existsSync(c) && statSync(c).isFile());
}

/**
 * The import graph of every .ts file under `dirs` (relative to `root`). Package imports are left out; relative
 * ones are resolved, and those that name no .ts file (json, sql, assets) are left out too.
 */
export function buildImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  const name = (abs: string): string => relative(root, abs).split(sep).join("/");
  for (const file of dirs.flatMap((d) => tsFilesUnder(join(root, d))).sort()) {
    const targets = specifiersOf(file, readFileSync(file, "utf8"))
      .filter((s) => s.startsWith("./") || s.startsWith("../"))
      .map((s) => resolveRelative(file, s))
      .filter((t): t is string => t !== undefined)
      .map(name);
    graph.set(name(file), [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components (Tarjan), each with more than one file or importing itself: the knots of cycles. */
function knots(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return out;
}

/** The shortest path from `from` to another file `to` inside `within` (breadth first), both ends included. */
function shortestPath(graph: ImportGraph, within: Set<string>, from: string, to: string): string[] {
  const previous = new Map<string, string>([[from, from]]);
  for (let queue = [from]; queue.length > 0 && !previous.has(to); ) {
    const next: string[] = [];
    for (const v of queue) {
      for (const w of graph.get(v) ?? []) {
        if (!within.has(w) || previous.has(w)) continue;
        previous.set(w, v);
        next.push(w);
      }
    }
    queue = next;
  }
  const path = [to];
  while (path[0] !== from) path.unshift(previous.get(path[0]!)!);
  return path;
}

/**
 * The import cycles of a graph, each as a closed chain `[a, b, …, a]`. Every import that takes part in a cycle
 * appears in at least one chain: for each such import a → b, the shortest way back from b to a closes it.
 * Chains are rotated to start at their smallest file name and listed once each.
 */
export function findCycles(graph: ImportGraph): string[][] {
  const chains = new Map<string, string[]>();
  for (const knot of knots(graph)) {
    const within = new Set(knot);
    for (const a of knot) {
      for (const b of graph.get(a) ?? []) {
        if (!within.has(b)) continue;
        const loop = a === b ? [a] : [a, ...shortestPath(graph, within, b, a).slice(0, -1)];
        const start = loop.indexOf([...loop].sort()[0]!);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        chains.set(rotated.join("\n"), [...rotated, rotated[0]!]);
      }
    }
  }
  return [...chains.values()].sort((x, y) => x.join().localeCompare(y.join()));
}
