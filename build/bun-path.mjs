// Finds the project-local Bun binary that build/setup.mjs installs from npm (a fresh box has only Node and npm).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const toolsDir = join(root, ".tools");
export const wantedVersion = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).bunVersion;

/** Path of the real Bun executable under .tools, or null when it is not installed (or another version is). */
export function localBun() {
  const scope = join(toolsDir, "node_modules", "@oven");
  if (!existsSync(scope)) return null;
  for (const pkg of readdirSync(scope)) {
    const bin = join(scope, pkg, "bin", "bun");
    const meta = join(scope, pkg, "package.json");
    if (!existsSync(bin) || !existsSync(meta)) continue;
    if (JSON.parse(readFileSync(meta, "utf8")).version === wantedVersion) return bin;
  }
  return null;
}
