// `npm run bench`'s device section: which device auto picks here, the webgpu formats' accuracy against cpu fp32, and the decode step's time and host↔device bytes at 1 and 16 rows.
import { MACHINE_PROBES } from "../../src/devices/choose-devices.ts";
import { type DeviceCandidate, needsProbe, type Placement, placeModel, type WebgpuView } from "../../src/devices/device-choice.ts";
import type { SmallStepFormat } from "../../src/models/step-formats.ts";
import { loadDeviceModel } from "../../workers/text/device/load-device-model.ts";
import { loadModel } from "../../workers/text/load-model.ts";
import { ensureBenchModel, GPU_BENCH_DTYPES, PRESET, SPEC } from "./bench-model.ts";
import { loadEngineModel } from "./engine-inproc.ts";
import { fp16Correlation, fp16Derivation, q4f16Derivation, q4f16VsQ4Correlation } from "../../src/modelgen/gpu-bounds.ts";
import { agreement, type ForcedRun, forcedRun } from "./webgpu-accuracy.ts";
import { accuracyLine, adapterLine, deviceLine, skippedLine, type StepRow, stepTable, transferGrowth, webgpuHere, type WebgpuHere } from "./webgpu-report.ts";
import { decodeStepProfile, type StepShape, syntheticPrompt } from "./webgpu-steps.ts";

/** KILN_BENCH_WEBGPU=0 leaves the section out (at 0.5B on a software driver it takes minutes). */
export const WEBGPU_ENABLED = process.env.KILN_BENCH_WEBGPU !== "0";
/**
 * The long context of the step table: transfers must not grow with it, which a short run cannot show. 256 on the tiny
 * preset (the README's quick run): a software driver's 512-token prefill takes seconds even there.
 */
const LONG_CONTEXT = Number(process.env.KILN_BENCH_WEBGPU_CONTEXT ?? (PRESET === "tiny" ? 256 : 512));
/** Tokens a row generates in the step table: a software driver takes seconds a step at 0.5B, and a few steps give the median. */
const STEP_TOKENS = Number(process.env.KILN_BENCH_WEBGPU_TOKENS ?? 8);
const STEP_ROWS = [1, 16];
/** Positions of the teacher-forced run, as the int8 line's. */
const POSITIONS = 32;
/** The format auto would serve on a GPU (GPU_DTYPES' best): the step table runs it; fp16 only gets its accuracy line. */
const TABLE_DTYPE = "q4f16";
/**
 * Each GPU format against the CPU format with the same weights: fp16 against fp32, q4f16 against q4 (the same 4-bit
 * levels; against fp32 it carries q4's own error, printed beside it without a bound of its own).
 */
const BOUNDS: Record<string, { reference: "fp32" | "q4"; bound: number; derivation: string }> = {
  q4f16: { reference: "q4", bound: q4f16VsQ4Correlation(SPEC), derivation: q4f16Derivation(SPEC) },
  fp16: { reference: "fp32", bound: fp16Correlation(SPEC), derivation: fp16Derivation(SPEC) },
};

export interface DeviceHere {
  placement: Placement;
  webgpu: WebgpuHere;
}

/**
 * Lists the adapters and runs the webgpu probe as the server would, for the bench model's fp32 build (which carries
 * q4f16, as the built-in models do). The probe also runs where auto would skip it (a software adapter): the section
 * needs its verdict.
 */
export async function deviceHere(): Promise<DeviceHere> {
  const listed = MACHINE_PROBES.adapters();
  const view: WebgpuView = { adapters: listed.adapters, ...(listed.error ? { adaptersError: listed.error } : {}), probe: null };
  const candidate: DeviceCandidate = { id: SPEC.id, device: null, defaultDtype: "fp32", dtypes: ["fp32", ...GPU_BENCH_DTYPES], kind: "text" };
  if (view.adapters.length > 0 && (WEBGPU_ENABLED || needsProbe([candidate], "auto", view.adapters))) view.probe = await MACHINE_PROBES.probe();
  return { placement: placeModel(candidate, "auto", view), webgpu: webgpuHere(view) };
}

export interface SectionInput {
  /** The bench prompt's templated ids: the accuracy run's prompt and the table's short context. */
  promptIds: number[];
  /** The CPU rows' format, as the rest of the bench runs it. */
  cpu: { dir: string; dtype: string; small?: SmallStepFormat };
  threads: number;
}

/** Progress lines with the time since the section began: at 0.5B on a software driver a phase takes minutes. */
function progressFrom(started: number): (what: string) => void {
  return (what) => console.log(`webgpu section, ${((performance.now() - started) / 1000).toFixed(0)} s: ${what} …`);
}

export interface SectionResult {
  /** Device lines, then (when webgpu runs here) the accuracy lines, the step table and its check. */
  text: string;
  /** Checks that failed (a bound missed, transfers that grew): the caller prints the text first, then fails on them. */
  problems: string[];
}

export async function webgpuSection(input: SectionInput): Promise<SectionResult> {
  const here = await deviceHere();
  const head = [deviceLine(here.placement), adapterLine(here.webgpu)];
  const problems: string[] = [];
  if (!WEBGPU_ENABLED) return { text: [...head, skippedLine("KILN_BENCH_WEBGPU=0")].join("\n"), problems };
  if (!here.webgpu.ok) return { text: [...head, skippedLine(`webgpu is not available here (${here.webgpu.reason})`)].join("\n"), problems };
  const started = performance.now();
  const progress = progressFrom(started);
  const dir = await ensureBenchModel("fp32");
  const shapes = stepShapes(input.promptIds);

  progress(`cpu fp32 reference: a ${POSITIONS}-token greedy run of the bench prompt`);
  const refs: Record<string, ForcedRun> = {};
  for (const dtype of ["fp32", "q4"]) {
    const cpuRef = await loadModel({ id: SPEC.id, dir, dtype, threads: input.threads, maxBatch: 1 });
    try {
      // The q4 reference is fed the fp32 run's tokens too: every run sees the same sequence.
      refs[dtype] = await forcedRun(cpuRef.runner, input.promptIds, POSITIONS, refs.fp32?.fed);
    } finally {
      await cpuRef.dispose();
    }
  }
  const ref = refs.fp32!;

  const accuracy: string[] = [];
  const steps: StepRow[] = [];
  for (const dtype of [TABLE_DTYPE, "fp16"]) {
    progress(`loading webgpu ${dtype} (its first passes compile the shaders: about 80 s at 0.5B on a software driver)`);
    const m = await loadDeviceModel({ id: SPEC.id, dir, dtype, device: "webgpu", threads: input.threads, maxBatch: Math.max(...STEP_ROWS) });
    try {
      progress(`webgpu ${dtype}: the same run, fed the reference's tokens`);
      const run = await forcedRun(m.runner, input.promptIds, POSITIONS, ref.fed);
      const { reference, bound, derivation } = BOUNDS[dtype]!;
      const a = agreement(refs[reference]!, run);
      accuracy.push(accuracyLine(dtype, a, { reference: `cpu ${reference}`, bound, derivation }));
      if (reference !== "fp32") accuracy.push(accuracyLine(dtype, agreement(ref, run), { reference: "cpu fp32", versus: agreement(ref, refs[reference]!) }));
      if (!(a.min >= bound)) problems.push(`webgpu ${dtype} tracks cpu ${reference} with a correlation of ${a.min.toFixed(4)}, below its bound ${bound}`);
      if (dtype !== TABLE_DTYPE) continue;
      for (const shape of shapes) {
        progress(`webgpu ${dtype}: ${shape.rows} rows at context ${shape.prompt.length}`);
        steps.push({ device: `webgpu ${dtype}`, ...(await decodeStepProfile(m.runner, m.tokenBytes, shape)) });
      }
    } finally {
      await m.dispose();
    }
  }

  const cpuLabel = `cpu ${input.cpu.dtype}`;
  const cpu = await loadEngineModel(input.cpu.dir, input.cpu.dtype, input.threads, input.cpu.small);
  try {
    for (const shape of shapes) {
      progress(`${cpuLabel}: ${shape.rows} rows at context ${shape.prompt.length}`);
      steps.push({ device: cpuLabel, ...(await decodeStepProfile(cpu.runner, cpu.tokenBytes, shape)) });
    }
  } finally {
    await cpu.dispose();
  }

  const growth = transferGrowth(steps);
  problems.push(...growth.offenders.map((o) => `transfer per decode step grew with the context: ${o}`));
  const note =
    `webgpu ${TABLE_DTYPE} and ${cpuLabel} through kiln's engine in process, ${STEP_TOKENS} tokens a row, medians over the steps that ` +
    `decoded every row and prefilled nothing (section took ${((performance.now() - started) / 1000).toFixed(0)} s)`;
  return { text: [...head, ...accuracy, note, "", stepTable(steps), growth.line].join("\n"), problems };
}

/** 1 and 16 rows at the bench prompt's context and at a long one (within the model's context, with room to decode). */
function stepShapes(promptIds: number[]): StepShape[] {
  const longest = Math.min(LONG_CONTEXT, (SPEC.contextLength ?? LONG_CONTEXT + STEP_TOKENS) - STEP_TOKENS);
  const long = syntheticPrompt(longest, SPEC.vocab);
  return STEP_ROWS.flatMap((rows) => [promptIds, long].map((prompt) => ({ rows, prompt, newTokens: STEP_TOKENS })));
}
