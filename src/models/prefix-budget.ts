// How much prefix KV each text worker may keep: the operator's figure, or a share of the memory the models' weights
// leave free on this box.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { PrefixCacheSpec } from "../protocol/text.ts";
import { onnxFileForDtype } from "./manifest.ts";

/** Tokens per cached block: small enough that a hit loses little at its end, large enough to keep the index small. */
export const PREFIX_BLOCK_TOKENS = 16;
const MIB = 1024 * 1024;
/** The default share of the memory the weights leave: a tenth, between 64 MiB and 4 GiB per worker. */
const SHARE = 0.1;
const FLOOR = 64 * MIB;
const CEILING = 4096 * MIB;

/**
 * Bytes per worker: `configuredMb` when set; else a tenth of what the box's memory keeps after every worker's weights,
 * split over the workers, within [64 MiB, 4 GiB].
 */
export function prefixCacheBytes(o: { configuredMb?: number; totalMemory: number; weightBytes: readonly number[]; workersPerModel: number }): number {
  if (o.configuredMb !== undefined) return o.configuredMb * MIB;
  const workers = Math.max(1, o.weightBytes.length * o.workersPerModel);
  const weights = o.weightBytes.reduce((sum, b) => sum + b, 0) * o.workersPerModel;
  const free = Math.max(0, o.totalMemory - weights);
  return Math.min(CEILING, Math.max(FLOOR, Math.floor((free * SHARE) / workers)));
}

/** The bytes of a model folder's decoder weights in the formats a worker loads (graph file plus external data). */
export function weightBytes(dir: string, dtypes: readonly string[]): number {
  let total = 0;
  for (const dtype of dtypes) {
    const file = onnxFileForDtype(dtype);
    if (!file) continue;
    for (const path of [join(dir, "onnx", file), join(dir, "onnx", `${file}_data`)]) if (existsSync(path)) total += statSync(path).size;
  }
  return total;
}

/** The workers' prefix cache, or undefined when the operator turned it off. */
export function prefixCacheSpec(o: { enabled: boolean; configuredMb?: number; totalMemory: number; weightBytes: readonly number[]; workersPerModel: number }): PrefixCacheSpec | undefined {
  if (!o.enabled) return undefined;
  return { maxBytes: prefixCacheBytes(o), blockTokens: PREFIX_BLOCK_TOKENS };
}
