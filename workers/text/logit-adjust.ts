// What a request's penalties and logit bias do to a row's logits before anything chooses among them: presence and
// frequency penalties over the tokens generated so far, a repetition penalty over the prompt and the output, and a
// fixed bias per token id. Built only for a sequence that asks, so other rows pay nothing.
import type { SamplingParams } from "../../src/protocol/text.ts";

export class LogitAdjuster {
  /** Each generated token id → how many times it was generated. */
  private readonly counts = new Map<number, number>();
  /** Ids the repetition penalty covers: the prompt's and the generated ones. */
  private readonly seen: Set<number>;
  private readonly presence: number;
  private readonly frequency: number;
  private readonly repetition: number;
  private readonly bias: readonly (readonly [number, number])[];

  private constructor(params: SamplingParams, promptIds: readonly number[]) {
    this.presence = params.presencePenalty ?? 0;
    this.frequency = params.frequencyPenalty ?? 0;
    this.repetition = params.repetitionPenalty ?? 1;
    this.bias = params.logitBias ?? [];
    this.seen = new Set(this.repetition !== 1 ? promptIds : []);
  }

  /** An adjuster for a sequence whose params ask for one, else null. */
  static for(params: SamplingParams, promptIds: readonly number[]): LogitAdjuster | null {
    const asks = (params.presencePenalty ?? 0) !== 0 || (params.frequencyPenalty ?? 0) !== 0 || (params.repetitionPenalty ?? 1) !== 1 || (params.logitBias?.length ?? 0) > 0;
    return asks ? new LogitAdjuster(params, promptIds) : null;
  }

  /** Notes a token the sequence wrote (sampled or forced), for the penalties of the next steps. */
  record(token: number): void {
    this.counts.set(token, (this.counts.get(token) ?? 0) + 1);
    if (this.repetition !== 1) this.seen.add(token);
  }

  /**
   * Adjusts `logits` in place. The repetition penalty divides a positive logit and multiplies a negative one (as
   * the transformers library and vLLM do), so a seen token always becomes less likely; presence subtracts once per
   * token seen in the output, frequency once per occurrence; the bias is added last.
   */
  apply(logits: Float32Array): void {
    if (this.repetition !== 1) {
      for (const id of this.seen) {
        const v = logits[id]!;
        logits[id] = v > 0 ? v / this.repetition : v * this.repetition;
      }
    }
    if (this.presence !== 0 || this.frequency !== 0) {
      for (const [id, count] of this.counts) logits[id] = logits[id]! - this.presence - this.frequency * count;
    }
    for (const [id, b] of this.bias) logits[id] = logits[id]! + b;
  }
}

/**
 * Min-p filtering: keeps the tokens whose probability at `temperature` is at least `minP` times the most likely
 * one's, setting the rest to −∞. In logits that is l ≥ max + T·ln(minP), so nothing is exponentiated.
 */
export function applyMinP(logits: Float32Array, minP: number, temperature: number): void {
  if (!(minP > 0) || !(temperature > 0)) return;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  if (max === -Infinity) return;
  const floor = max + temperature * Math.log(minP);
  for (let i = 0; i < logits.length; i++) if (!(logits[i]! >= floor)) logits[i] = -Infinity;
}
