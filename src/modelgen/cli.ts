// `kiln models build`: parses flags, builds a preset into the models dir atomically, reports progress.
import { DTYPES as BUILD_DTYPES } from "./build.ts";
import { installGguf } from "./gguf-install.ts";
import { GGUF_FORMATS, type GgufFormat } from "./gguf-model.ts";
import { isImageSpec } from "./diffusion/image-spec.ts";
import { isEmbeddingSpec } from "./embedding-spec.ts";
import { installModel } from "./install.ts";
import { mediaArchitecture } from "./media-spec.ts";
import { PRESET_NAMES, presetSpec, type AnySpec } from "./presets.ts";
import { commandArgs, parseFlags } from "./cli-flags.ts";
import { progressReporter } from "./progress.ts";
import type { Dtype } from "./spec.ts";

export interface BuildArgs {
  preset: string;
  dtypes: Dtype[];
  defaultDtype?: Dtype;
  out: string;
  seed?: number;
  force: boolean;
  /** Also write llama.cpp GGUF files of the same weights (for side-by-side benchmarks), beside the model folder. */
  gguf?: GgufFormat[];
}

export const USAGE = `usage: kiln models build --preset <${PRESET_NAMES.join("|")}> [--dtype fp32,q4,int8,fp16,q4f16] [--default-dtype <dtype>]
                         [--out <models dir>] [--seed N] [--force] [--gguf ${GGUF_FORMATS.join(",")}]
  Writes <models dir>/<model id>/ (default models dir: ./models; default dtype: the first listed).
  fp16 and q4f16 are WebGPU graphs (GroupQueryAttention, no attention_mask input), for text presets only.
  --gguf also writes the same weights as llama.cpp GGUF files: <models dir>/<model id>-<format>-<hash>.gguf.
  Image presets (Stable Diffusion folders) are built in fp32 only, without GGUF files.
  An identical existing build is kept unless --force is given.`;

const DTYPES: readonly string[] = BUILD_DTYPES;

/** Parses argv (flags as `--name value` or `--name=value`); returns the arguments or an error message. */
export function parseBuildArgs(argv: string[]): BuildArgs | { error: string } {
  const parsed = parseFlags(argv, ["preset", "dtype", "default-dtype", "out", "seed", "gguf"], ["force"], false);
  if ("error" in parsed) return parsed;
  const { flags } = parsed;
  const force = parsed.switches.has("force");
  const preset = flags.get("preset");
  if (!preset) return { error: "--preset is required" };
  const spec = presetSpec(preset);
  if (!spec) return { error: `unknown preset "${preset}" (available: ${PRESET_NAMES.join(", ")})` };
  const dtypes = (flags.get("dtype") ?? "fp32").split(",").map((s) => s.trim()).filter(Boolean);
  const bad = dtypes.find((d) => !DTYPES.includes(d));
  if (bad || !dtypes.length) return { error: `--dtype must list ${DTYPES.join(", ")} (got "${flags.get("dtype")}")` };
  const defaultDtype = flags.get("default-dtype");
  if (defaultDtype !== undefined && !dtypes.includes(defaultDtype)) return { error: `--default-dtype must be one of the built dtypes (${dtypes.join(", ")})` };
  let seed: number | undefined;
  if (flags.has("seed")) {
    seed = Number(flags.get("seed"));
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) return { error: "--seed must be an integer in [0, 4294967295]" };
  }
  const gguf = flags.get("gguf")?.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (gguf && (!gguf.length || gguf.some((f) => !GGUF_FORMATS.includes(f as GgufFormat)))) return { error: `--gguf must list ${GGUF_FORMATS.join(", ")} (got "${flags.get("gguf")}")` };
  if (isImageSpec(spec) || isEmbeddingSpec(spec)) {
    // The diffusion and embedding graphs have no quantized form, and llama.cpp runs neither.
    const kind = isImageSpec(spec) ? "an image" : "an embedding";
    if (dtypes.some((d) => d !== "fp32")) return { error: `"${preset}" is ${kind} preset: it is built in fp32 only (got --dtype ${flags.get("dtype")})` };
    if (gguf) return { error: `--gguf is for text presets; "${preset}" is ${kind} model` };
  } else if (mediaArchitecture(spec) && dtypes.some((d) => d === "fp16" || d === "q4f16")) {
    return { error: `fp16 and q4f16 are for text presets; "${preset}" has media encoders` };
  } else if (gguf && mediaArchitecture(spec)) {
    // GGUF files hold a text model; llama.cpp would not see the encoders.
    return { error: `--gguf is for text presets; "${preset}" has media encoders` };
  }
  return {
    preset, dtypes: [...new Set(dtypes)] as Dtype[], defaultDtype: defaultDtype as Dtype | undefined, out: flags.get("out") ?? "./models", seed, force,
    gguf: gguf && ([...new Set(gguf)] as GgufFormat[]),
  };
}

export async function modelsBuildCommand(argv: string[]): Promise<number> {
  const args = commandArgs("build", USAGE, argv, parseBuildArgs);
  if ("exit" in args) return args.exit;
  const spec: AnySpec = { ...presetSpec(args.preset)!, ...(args.seed !== undefined ? { seed: args.seed } : {}) };
  const started = Date.now();
  const onProgress = progressReporter({ tty: Boolean(process.stdout.isTTY), write: (s) => process.stdout.write(s) });
  try {
    const { dir, built } = await installModel(args.out, { spec, dtypes: args.dtypes, defaultDtype: args.defaultDtype, force: args.force, onProgress });
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    console.log(built ? `built ${spec.id} (${args.dtypes.join(", ")}) in ${secs}s → ${dir}` : `${spec.id} is already built and intact → ${dir} (use --force to rebuild)`);
    // parseBuildArgs refuses --gguf for image presets.
    if (!isImageSpec(spec) && !isEmbeddingSpec(spec)) {
      for (const format of args.gguf ?? []) {
        const g = await installGguf(args.out, spec, format, onProgress);
        console.log(g.built ? `wrote ${format} GGUF → ${g.path}` : `${format} GGUF is already written → ${g.path}`);
      }
    }
    return 0;
  } catch (e) {
    console.error(`kiln models build: ${(e as Error).message}`);
    return 1;
  }
}
