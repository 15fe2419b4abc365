// Checks an `add` request before it can reach the model, so a malformed one fails alone with a clear message.
import type { SamplingParams } from "../../src/scheduler/protocol.ts";

export interface ModelLimits {
  /** Token ids must be below this. */
  vocabSize: number;
  /** Prompt plus generated tokens may not exceed this. */
  maxContext: number;
}

const isInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x);

/** Returns a short reason the request cannot run, or null when it is valid. */
export function addProblem(promptIds: unknown, params: unknown, limits: ModelLimits): string | null {
  if (!Array.isArray(promptIds) || promptIds.length === 0) return "prompt is empty";
  for (const id of promptIds) {
    if (!isInt(id) || id < 0 || id >= limits.vocabSize) return `prompt token id ${String(id)} is outside the vocabulary (0..${limits.vocabSize - 1})`;
  }
  if (promptIds.length >= limits.maxContext) return `prompt has ${promptIds.length} tokens; the context holds ${limits.maxContext}`;
  if (typeof params !== "object" || params === null) return "sampling params are missing";
  const p = params as Partial<SamplingParams>;
  if (!isInt(p.maxTokens) || p.maxTokens < 1) return "maxTokens must be a positive integer";
  if (typeof p.temperature !== "number" || !Number.isFinite(p.temperature) || p.temperature < 0) return "temperature must be a finite number ≥ 0";
  if (typeof p.topP !== "number" || !(p.topP > 0 && p.topP <= 1)) return "topP must be in (0, 1]";
  if (p.topK !== undefined && (!isInt(p.topK) || p.topK < 1)) return "topK must be a positive integer";
  if (typeof p.seed !== "number" || !Number.isFinite(p.seed)) return "seed must be a finite number";
  if (!Array.isArray(p.stop) || !p.stop.every((s) => typeof s === "string")) return "stop must be a list of strings";
  if (!Array.isArray(p.stopTokenIds) || !p.stopTokenIds.every(isInt)) return "stopTokenIds must be a list of integers";
  if (p.thinking !== undefined) {
    const t = p.thinking;
    const inVocab = (id: unknown) => isInt(id) && id >= 0 && id < limits.vocabSize;
    if (!t || !isInt(t.budget) || t.budget < 0 || !inVocab(t.closeTokenId) || !Array.isArray(t.forceIds) || !t.forceIds.length || !t.forceIds.every(inVocab)) {
      return "thinking must be {budget ≥ 0, closeTokenId, forceIds} with ids in the vocabulary";
    }
  }
  return null;
}
