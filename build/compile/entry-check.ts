// Checks that the entry point loads the native preload before any other module.

/** True when the first import/export-from statement of `source` is `import "./native/preload.ts"`. */
export function preloadIsFirst(source: string): boolean {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split("\n")
    .map((line) => line.replace(/^\s*\/\/.*$/, "").trim())
    .filter(Boolean);
  const first = code.find((line) => /^(import|export)\b/.test(line));
  return first !== undefined && /^import\s+["']\.\/native\/preload(\.ts)?["'];?$/.test(first);
}
