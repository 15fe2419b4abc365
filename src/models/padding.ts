// How a model's rows of different lengths share a batch on the CPU: left-padded (kiln's graphs, exact), right-padded
// (a GroupQueryAttention graph, which reads each row's cache from column 0), or not at all.
import type { ModelEntry } from "./registry.ts";

/** Whether the format a CPU worker runs for `model` is a GroupQueryAttention graph whose rows go right-padded. */
export function rightPaddedOnCpu(model: Pick<ModelEntry, "batching" | "defaultDtype" | "placement">): boolean {
  if (model.batching.leftPadding === "exact" || model.placement?.device === "webgpu") return false;
  return model.batching.rightPadded?.includes(model.placement?.dtype ?? model.defaultDtype) ?? false;
}

/** The `kiln models list` batch column: rows a CPU worker decodes together, and how, when they are not left-padded. */
export function batchLabel(model: Pick<ModelEntry, "batching" | "defaultDtype" | "placement">): string {
  if (model.batching.leftPadding === "exact") return String(model.batching.maxBatch);
  return rightPaddedOnCpu(model) ? `${model.batching.maxBatch} (right-padded)` : "1 (unsafe padding)";
}
