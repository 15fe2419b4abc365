// `kiln models import <file.gguf | folder> [--id <id>] [--dtype int8,q4,q4f16] [--default-dtype <dtype>] [--force]`.
import { DTYPES } from "../build.ts";
import { commandArgs, parseFlags } from "../cli-flags.ts";
import { progressReporter } from "../progress.ts";
import type { Dtype } from "../spec.ts";
import { IMPORT_DTYPES, importModel } from "./import-model.ts";

export const IMPORT_USAGE = `usage: kiln models import <file.gguf | Hugging Face folder> [--id <model id>] [--dtype ${IMPORT_DTYPES.join(",")}]
                          [--default-dtype <dtype>] [--force]
  Compiles the model into kiln's own graphs in the models dir (once: a later import of the same file does nothing).
  Architectures: llama (Llama 3.x, Mistral, SmolLM2, TinyLlama), qwen2 (Qwen2.5), qwen3 (Qwen3), phi3 (Phi-3).
  Formats: ${DTYPES.join(", ")} (default ${IMPORT_DTYPES.join(", ")}: int8 with q4 for one-token passes on a CPU, q4f16 on a GPU).`;

export interface ImportArgs {
  source: string;
  id?: string;
  dtypes?: Dtype[];
  defaultDtype?: Dtype;
  force: boolean;
}

export function parseImportArgs(argv: string[]): ImportArgs | { error: string } {
  const parsed = parseFlags(argv, ["id", "dtype", "default-dtype"], ["force"], true);
  if ("error" in parsed) return parsed;
  const { flags, positional: source } = parsed;
  const force = parsed.switches.has("force");
  if (!source) return { error: "name a .gguf file or a Hugging Face model folder" };
  const dtypes = flags.has("dtype") ? (flags.get("dtype")!.split(",") as Dtype[]) : undefined;
  if (dtypes && (!dtypes.length || dtypes.some((d) => !DTYPES.includes(d)))) return { error: `--dtype must list ${DTYPES.join(", ")} (got "${flags.get("dtype")}")` };
  const defaultDtype = flags.get("default-dtype") as Dtype | undefined;
  if (defaultDtype !== undefined && !(dtypes ?? IMPORT_DTYPES).includes(defaultDtype)) return { error: `--default-dtype must be one of the imported dtypes (${(dtypes ?? IMPORT_DTYPES).join(", ")})` };
  return { source, force, ...(flags.has("id") ? { id: flags.get("id") } : {}), ...(dtypes ? { dtypes } : {}), ...(defaultDtype ? { defaultDtype } : {}) };
}

export async function modelsImportCommand(argv: string[], modelsDir: string): Promise<number> {
  const args = commandArgs("import", IMPORT_USAGE, argv, parseImportArgs);
  if ("exit" in args) return args.exit;
  const started = performance.now();
  try {
    const r = await importModel(args.source, modelsDir, { id: args.id, dtypes: args.dtypes, defaultDtype: args.defaultDtype, force: args.force, onProgress: progressReporter({ tty: Boolean(process.stdout.isTTY), write: (t) => process.stdout.write(t) }) });
    const secs = ((performance.now() - started) / 1000).toFixed(1);
    console.log(r.imported ? `imported ${r.id} in ${secs}s → ${r.dir}` : `${r.id} is already imported from this file → ${r.dir} (use --force to import again)`);
    return 0;
  } catch (e) {
    console.error(`kiln models import: ${(e as Error).message}`);
    return 1;
  }
}
