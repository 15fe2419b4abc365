// Checks an `add` request before it can reach the model, so a malformed one fails alone with a clear message.
import type { OutputConstraint, SamplingParams } from "../../src/protocol/text.ts";

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
  // Scoring a prompt may generate nothing (max_tokens 0 with echo); otherwise at least one token.
  const leastTokens = p.promptLogprobs !== undefined ? 0 : 1;
  if (!isInt(p.maxTokens) || p.maxTokens < leastTokens) return leastTokens ? "maxTokens must be a positive integer" : "maxTokens must be a whole number ≥ 0";
  if (typeof p.temperature !== "number" || !Number.isFinite(p.temperature) || p.temperature < 0) return "temperature must be a finite number ≥ 0";
  if (typeof p.topP !== "number" || !(p.topP > 0 && p.topP <= 1)) return "topP must be in (0, 1]";
  if (p.topK !== undefined && (!isInt(p.topK) || p.topK < 1)) return "topK must be a positive integer";
  const penalty = samplerProblem(p, limits.vocabSize);
  if (penalty) return penalty;
  if (typeof p.seed !== "number" || !Number.isFinite(p.seed)) return "seed must be a finite number";
  if (!Array.isArray(p.stop) || !p.stop.every((s) => typeof s === "string")) return "stop must be a list of strings";
  if (!Array.isArray(p.stopTokenIds) || !p.stopTokenIds.every(isInt)) return "stopTokenIds must be a list of integers";
  if (p.silentTokenIds !== undefined && !(Array.isArray(p.silentTokenIds) && p.silentTokenIds.every(isInt))) return "silentTokenIds must be a list of integers";
  if (p.bannedTokenIds !== undefined && !(Array.isArray(p.bannedTokenIds) && p.bannedTokenIds.every((id) => isInt(id) && id >= 0 && id < limits.vocabSize))) {
    return "bannedTokenIds must be a list of ids in the vocabulary";
  }
  if (p.thinking !== undefined) {
    const t = p.thinking;
    const inVocab = (id: unknown) => isInt(id) && id >= 0 && id < limits.vocabSize;
    if (!t || !isInt(t.budget) || t.budget < 0 || !inVocab(t.closeTokenId) || !Array.isArray(t.forceIds) || !t.forceIds.length || !t.forceIds.every(inVocab)) {
      return "thinking must be {budget ≥ 0, closeTokenId, forceIds} with ids in the vocabulary";
    }
  }
  if (p.singleCall !== undefined) {
    const c = p.singleCall;
    const optId = (id: unknown) => id === undefined || (isInt(id) && id >= 0 && id < limits.vocabSize);
    if (!c || typeof c !== "object" || !optId(c.openId) || !optId(c.closeId) || !optId(c.startAfter) || (c.opened !== undefined && typeof c.opened !== "boolean")) {
      return "singleCall must be {openId?, closeId?, opened?, startAfter?} with ids in the vocabulary";
    }
  }
  if (p.constraint !== undefined) return constraintProblem(p.constraint, limits.vocabSize);
  return null;
}

const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** Why the optional samplers (min-p, penalties, bias) cannot run, or null. */
function samplerProblem(p: Partial<SamplingParams>, vocabSize: number): string | null {
  if (p.logprobs !== undefined && !(isInt(p.logprobs) && p.logprobs >= 0 && p.logprobs <= 20)) return "logprobs must be a whole number from 0 to 20";
  if (p.promptLogprobs !== undefined && !(isInt(p.promptLogprobs) && p.promptLogprobs >= 0 && p.promptLogprobs <= 20)) return "promptLogprobs must be a whole number from 0 to 20";
  if (p.minP !== undefined && !(finite(p.minP) && p.minP >= 0 && p.minP <= 1)) return "minP must be in [0, 1]";
  if (p.presencePenalty !== undefined && !finite(p.presencePenalty)) return "presencePenalty must be a finite number";
  if (p.frequencyPenalty !== undefined && !finite(p.frequencyPenalty)) return "frequencyPenalty must be a finite number";
  if (p.repetitionPenalty !== undefined && !(finite(p.repetitionPenalty) && p.repetitionPenalty > 0)) return "repetitionPenalty must be a number > 0";
  if (p.logitBias !== undefined) {
    const ok = Array.isArray(p.logitBias) && p.logitBias.every((e) => Array.isArray(e) && isInt(e[0]) && e[0] >= 0 && e[0] < vocabSize && finite(e[1]));
    if (!ok) return `logitBias must be [id, bias] pairs with ids in the vocabulary (0..${vocabSize - 1}) and finite biases`;
  }
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

/**
 * Returns a short reason an add's media list cannot run on a model taking `tokenIds` placeholders (none: no media),
 * or null. Each input must cover a run of its kind's placeholder ids inside the prompt, with no two runs sharing one.
 */
export function mediaProblem(media: unknown, promptIds: readonly number[], tokenIds: Partial<Record<string, number>> | undefined): string | null {
  if (media === undefined) return null;
  if (!Array.isArray(media)) return "media must be a list";
  if (media.length === 0) return null;
  if (!tokenIds) return "this model takes no image or audio input";
  const taken: [number, number][] = [];
  for (const [i, m] of media.entries()) {
    const kind = (m as { kind?: unknown })?.kind;
    if (kind !== "image" && kind !== "audio") return `media ${i}: kind must be "image" or "audio"`;
    const what = `media ${i} (${kind})`;
    const token = tokenIds[kind];
    if (token === undefined) return `this model takes no ${kind} input`;
    const { at, tokens } = m as { at: unknown; tokens: unknown };
    if (!isInt(at) || !isInt(tokens) || at < 0 || tokens < 1 || at + tokens > promptIds.length) return `${what}: at and tokens must place it inside the prompt`;
    for (let j = at; j < at + tokens; j++) if (promptIds[j] !== token) return `${what}: prompt position ${j} is not the ${kind} token`;
    if (taken.some(([a, b]) => at < b && a < at + tokens)) return `${what}: overlaps another input`;
    taken.push([at, at + tokens]);
    const shape = kind === "image" ? imageProblem((m as { image?: unknown }).image) : audioProblem(m as { samples?: unknown; sampleRate?: unknown });
    if (shape) return `${what}: ${shape}`;
  }
  return null;
}

function imageProblem(image: unknown): string | null {
  const im = image as { bytes?: unknown; rgb?: unknown; width?: unknown; height?: unknown } | null;
  if (!im || typeof im !== "object") return "image must be {bytes} or {rgb, width, height}";
  if (im.bytes !== undefined) return im.bytes instanceof Uint8Array && im.bytes.length > 0 ? null : "bytes must be a non-empty Uint8Array";
  const { rgb, width, height } = im;
  if (!(rgb instanceof Uint8Array) || !isInt(width) || !isInt(height) || width < 1 || height < 1) return "image must be {bytes} or {rgb, width, height}";
  return rgb.length === width * height * 3 ? null : `rgb holds ${rgb.length} bytes, ${width}×${height}×3 expected`;
}

function audioProblem(a: { samples?: unknown; sampleRate?: unknown }): string | null {
  if (!(a.samples instanceof Float32Array) || a.samples.length === 0) return "samples must be a non-empty Float32Array";
  return typeof a.sampleRate === "number" && a.sampleRate > 0 ? null : "sampleRate must be a positive number";
}

/** What the engine's model offers beyond its limits, for addRefusal. */
export interface EngineAbilities extends ModelLimits {
  constrainable: boolean;
  /** The runner keeps every position's logits (prompts can be scored). */
  allPositions: boolean;
  mediaTokenIds: Partial<Record<string, number>> | undefined;
}

/** The reason the engine refuses an add (a bad or repeated id, a bad prompt or params, what the model cannot do), or null. */
export function addRefusal(seqId: unknown, known: ReadonlySet<string>, promptIds: number[], params: SamplingParams, media: unknown, a: EngineAbilities): string | null {
  if (typeof seqId !== "string" || seqId === "") return "seqId must be a non-empty string";
  if (known.has(seqId)) return `sequence ${seqId} is already running`;
  return (
    addProblem(promptIds, params, a) ??
    (params.constraint && !a.constrainable ? "this model's output cannot be constrained" : null) ??
    (params.promptLogprobs !== undefined && !a.allPositions ? "this model's runner keeps only the last position's logits: it cannot score a prompt" : null) ??
    mediaProblem(media, promptIds, a.mediaTokenIds)
  );
}
