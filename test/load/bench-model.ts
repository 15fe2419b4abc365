// The bench's model and sampling, shared by `npm run bench` and its scenarios: the preset, weight format and
// small-step rule from the environment, and the build of the bench model when it is missing.
import { join } from "node:path";
import { installModel, PRESETS, type Dtype } from "../../src/modelgen/index.ts";
import { formatsLabel, smallStepFormat, smallStepTokensFor } from "../../src/models/step-formats.ts";
import { readCpuInfo } from "../../src/native/cpu.ts";

/** int8 (DynamicQuantizeMatMul) by default: on CPU it gains the most from batching (q4 is faster alone, slower at 16). */
export const DTYPE = (process.env.KILN_BENCH_DTYPE ?? "int8") as Dtype;
export const NEW_TOKENS = Number(process.env.KILN_BENCH_TOKENS ?? 64);
/** Each level runs this many times and reports its median round: this machine's neighbours make single runs noisy. */
export const ROUNDS = Number(process.env.KILN_BENCH_ROUNDS ?? 3);
/** One models dir per dtype: both builds carry the same model id. */
export const MODELS_BASE = process.env.KILN_BENCH_MODELS ?? join(import.meta.dir, "..", "..", "data", "bench-models");
export const MODELS_DIR = join(MODELS_BASE, DTYPE);
/** The 0.5B shape by default; `tiny` makes a quick run that exercises the whole bench (the README test uses it). */
export const PRESET = process.env.KILN_BENCH_PRESET ?? "qwen2-0.5b";
const PRESET_SPEC = PRESETS[PRESET] ?? (() => { throw new Error(`KILN_BENCH_PRESET: no preset "${PRESET}"`); })();
/** Its own id: the server builds its default model (the tiny preset's id, fp32) into the same models dir. */
export const SPEC = { ...PRESET_SPEC, id: PRESET_SPEC.id.replace(/-v(\d+)$/, "-bench-v$1") };
/**
 * kiln runs passes of a few tokens on q4 beside an int8 default (src/models/step-formats.ts): the bench's int8 folder
 * carries both, and the server, the engine and the direct loop all follow the same rule. KILN_SMALL_STEP_TOKENS=0
 * measures int8 alone.
 */
const SMALL_TOKENS = Number(process.env.KILN_SMALL_STEP_TOKENS ?? smallStepTokensFor(readCpuInfo()));
export const BENCH_DTYPES: Dtype[] = DTYPE === "int8" && SMALL_TOKENS > 0 ? ["int8", "q4"] : [DTYPE];
export const SMALL = smallStepFormat({ defaultDtype: DTYPE, dtypes: BENCH_DTYPES }, SMALL_TOKENS);
export const FORMATS = formatsLabel(DTYPE, SMALL);
/** The one user message every client sends; the yardsticks run prompts of its templated token count. */
export const PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle on a quiet winter morning.";

/**
 * The WebGPU formats the bench's webgpu section runs (test/load/webgpu-section.ts). They ride in the fp32 folder, the
 * section's accuracy reference, whatever the section's switch says: a folder whose formats follow an env var would
 * be rebuilt (minutes at 0.5B) each time the switch flips.
 */
export const GPU_BENCH_DTYPES: Dtype[] = ["fp16", "q4f16"];
/** What the fp32 folder carries beside them: q4, the CPU twin of q4f16 (same 4-bit levels) its accuracy line is held to. */
const GPU_REFERENCE_DTYPES: Dtype[] = ["q4"];

/** Builds the bench model for `dtype` (`dtypes` in its folder, and the GPU formats in the fp32 one) unless an identical build is there. */
export async function ensureBenchModel(dtype: Dtype, cpuDtypes: Dtype[] = [dtype]): Promise<string> {
  const modelsDir = join(MODELS_BASE, dtype);
  const dtypes = dtype === "fp32" ? [...new Set([...cpuDtypes, ...GPU_REFERENCE_DTYPES, ...GPU_BENCH_DTYPES])] : cpuDtypes;
  console.log(`bench model ${SPEC.id} (${dtypes.join(", ")}) in ${modelsDir} …`);
  const r = await installModel(modelsDir, { spec: SPEC, dtypes, defaultDtype: dtype });
  console.log(r.built ? `  built` : `  up to date`);
  return r.dir;
}

/**
 * The server settings every bench scenario runs kiln with: all cores, the same small-step rule as the rest, and the
 * CPU device: its yardsticks (the direct loop, llama.cpp) run on the CPU, and on a GPU box auto would move an fp32
 * bench model (which carries q4f16) to the GPU. The device path has its own section.
 */
export function benchServerEnv(threads: number): Record<string, string> {
  return { KILN_THREADS: String(threads), KILN_SMALL_STEP_TOKENS: String(SMALL?.maxTokens ?? 0), KILN_DEVICE: "cpu" };
}
