// At start: the operator's `--model` (a .gguf file or a Hugging Face folder) and every .gguf file dropped into the
// models dir are imported once; a later start finds each import current by its source's size and time, at no cost.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { importModel, type ImportResult } from "./import-model.ts";

export interface StartImportLog {
  info(msg: string, fields: Record<string, unknown>): void;
  warn(msg: string, fields: Record<string, unknown>): void;
}

/** The .gguf files at the top of the models dir, in name order (dot-files are kiln's own half-written ones). */
export function droppedGgufFiles(modelsDir: string): string[] {
  if (!existsSync(modelsDir)) return [];
  return readdirSync(modelsDir, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith(".") && e.name.toLowerCase().endsWith(".gguf"))
    .map((e) => join(modelsDir, e.name))
    .sort();
}

/**
 * Imports what the start names. A failed `--model` stops the start (the operator asked for it by name); a dropped
 * file that fails is logged and skipped, as a broken model folder is.
 */
export async function importAtStart(modelsDir: string, model: string | null, log: StartImportLog): Promise<ImportResult[]> {
  const done: ImportResult[] = [];
  const run = async (path: string) => {
    const started = performance.now();
    const r = await importModel(path, modelsDir);
    if (r.imported) log.info("model imported", { source: path, model: r.id, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) });
    done.push(r);
  };
  if (model !== null) {
    try {
      await run(model);
    } catch (e) {
      throw new Error(`--model ${model}: ${(e as Error).message}`);
    }
  }
  for (const path of droppedGgufFiles(modelsDir)) {
    try {
      await run(path);
    } catch (e) {
      log.warn("model file skipped", { file: path, reason: (e as Error).message });
    }
  }
  return done;
}
