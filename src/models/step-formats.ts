// Which weights run a forward pass: the model's default format, or q4 for small steps where it is faster on this CPU.
import { type CpuInfo, hasInt8DotProduct } from "../native/cpu.ts";

/** A second weight format a worker loads beside the default and runs every forward pass of at most `maxTokens` tokens on. */
export interface SmallStepFormat {
  dtype: string;
  /** Rows × new tokens of a pass: 1 is one stream decoding alone. */
  maxTokens: number;
}

/**
 * The largest pass (rows × new tokens) for which q4 (MatMulNBits, int8 activations) beats int8 (DynamicQuantizeMatMul)
 * on this CPU. At one row a decode step reads the weights once, so q4's half-size weights win; with more rows int8's
 * GEMM wins. Measured on the 0.5B shape, decode step q4 / int8: AVX2 without VNNI (AMD EPYC) 0.75 at 1 row, 0.85 at 2,
 * 0.94 at 3, 1.09 at 4; with VNNI, int8 catches up sooner (q4 58 vs int8 49 tok/s at 1 row, 126 vs 133 at 4). Without
 * AVX2 neither kernel family was measured, so no second copy of the weights is loaded.
 */
export function smallStepTokensFor(cpu: CpuInfo): number {
  if (!cpu.flags.has("avx2")) return 0;
  return hasInt8DotProduct(cpu) ? 1 : 3;
}

/**
 * The small-step format for a model: q4 beside an int8 default when the folder has both and `maxTokens` > 0. Other
 * defaults keep one format (fp32 is chosen for exactness; q4 is already the small-step format).
 */
export function smallStepFormat(model: { defaultDtype: string; dtypes: readonly string[] }, maxTokens: number): SmallStepFormat | undefined {
  if (!(maxTokens > 0) || model.defaultDtype !== "int8" || !model.dtypes.includes("q4")) return undefined;
  return { dtype: "q4", maxTokens: Math.floor(maxTokens) };
}

/** Whether a pass of `rows` × `newTokens` runs on the small-step format. */
export function runsSmall(small: SmallStepFormat | undefined, rows: number, newTokens: number): boolean {
  return small !== undefined && rows * newTokens <= small.maxTokens;
}

/** "int8 (q4 for passes of ≤ 3 tokens)", or just the dtype: for logs and benchmark headers. */
export function formatsLabel(dtype: string, small: SmallStepFormat | undefined): string {
  return small ? `${dtype} (${small.dtype} for passes of ≤ ${small.maxTokens} tokens)` : dtype;
}
