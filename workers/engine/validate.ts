// Checks an `add` request before it can reach the model, so a malformed one fails alone with a clear message.
import type { OutputConstraint, SamplingParams } from "../../src/scheduler/protocol.ts";

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
  if (p.silentTokenIds !== undefined && !(Array.isArray(p.silentTokenIds) && p.silentTokenIds.every(isInt))) return "silentTokenIds must be a list of integers";
  if (p.thinking !== undefined) {
    const t = p.thinking;
    const inVocab = (id: unknown) => isInt(id) && id >= 0 && id < limits.vocabSize;
    if (!t || !isInt(t.budget) || t.budget < 0 || !inVocab(t.closeTokenId) || !Array.isArray(t.forceIds) || !t.forceIds.length || !t.forceIds.every(inVocab)) {
      return "thinking must be {budget ≥ 0, closeTokenId, forceIds} with ids in the vocabulary";
    }
  }
  if (p.constraint !== undefined) return constraintProblem(p.constraint, limits.vocabSize);
  return null;
}

function constraintProblem(c: unknown, vocabSize: number): string | null {
  const ids = (v: unknown, nonEmpty: boolean) => Array.isArray(v) && (!nonEmpty || v.length > 0) && v.every((id) => isInt(id) && id >= 0 && id < vocabSize);
  const o = c as Partial<OutputConstraint> | null;
  if (!o || typeof o !== "object") return "constraint must be an object";
  const spec = o.spec as { kind?: unknown; schema?: unknown } | undefined;
  if (!spec || !(spec.kind === "json_object" || (spec.kind === "json_schema" && typeof spec.schema === "object" && spec.schema !== null))) {
    return 'constraint.spec must be {kind: "json_object"} or {kind: "json_schema", schema}';
  }
  if (!ids(o.stopIds, true)) return "constraint.stopIds must be a non-empty list of ids in the vocabulary";
  if (o.closeIds !== undefined && !ids(o.closeIds, false)) return "constraint.closeIds must be ids in the vocabulary";
  const a = o.startAfter;
  if (a !== undefined && !(a && isInt(a.tokenId) && a.tokenId >= 0 && a.tokenId < vocabSize && ids(a.framingIds, false))) {
    return "constraint.startAfter must be {tokenId, framingIds} with ids in the vocabulary";
  }
  const t = o.trigger;
  if (t !== undefined && !(t && isInt(t.tokenId) && t.tokenId >= 0 && t.tokenId < vocabSize && ids(t.framingIds, false))) {
    return "constraint.trigger must be {tokenId, framingIds} with ids in the vocabulary";
  }
  return null;
}
