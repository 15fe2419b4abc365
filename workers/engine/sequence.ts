// One generation request inside the engine: its sampling state, text stream and the rules that end it.
import type { SamplingParams, SeqEndReason, SeqFinish } from "../../src/scheduler/protocol.ts";
import { createRng } from "./prng.ts";
import { SequenceText } from "./sequence-text.ts";
import { ThinkingTracker } from "./thinking-budget.ts";

export interface TokenOutcome {
  /** Text delta for this token. */
  text: string;
  /** Present when the sequence ended with this token. */
  finish?: SeqFinish;
}

export class Sequence {
  readonly rng: () => number;
  readonly promptTokens: number;
  generated = 0;
  /** The newest sampled token, fed at the next decode step. */
  lastToken = -1;
  cancelled = false;
  private readonly text: SequenceText;
  private readonly thinking: ThinkingTracker | null;

  constructor(
    readonly id: string,
    readonly promptIds: number[],
    readonly params: SamplingParams,
    tokenBytes: (id: number) => Uint8Array,
  ) {
    this.promptTokens = promptIds.length;
    this.rng = createRng(params.seed);
    this.text = new SequenceText(tokenBytes, params.stop, params.stopTokenIds);
    this.thinking = params.thinking ? new ThinkingTracker(params.thinking) : null;
  }

  /** A token the sequence must write next instead of sampling (its thinking budget is spent), or null. */
  forcedToken(): number | null {
    return this.thinking?.nextForced() ?? null;
  }

  /** Records a sampled token and applies the stop rules, in order: stop sequence, stop token, max tokens, context. */
  accept(token: number, maxContext: number): TokenOutcome {
    this.generated++;
    this.lastToken = token;
    this.thinking?.accept(token);
    const step = this.text.push(token);
    if (step.stopSequence !== undefined) return { text: step.text, finish: this.finish("stop", { stopSequence: step.stopSequence }) };
    if (step.stopToken) return { text: step.text + this.text.end(), finish: this.finish("stop") };
    if (this.generated >= this.params.maxTokens || this.promptTokens + this.generated >= maxContext) {
      return { text: step.text + this.text.end(), finish: this.finish("length") };
    }
    return { text: step.text };
  }

  finish(reason: SeqEndReason, extra: { stopSequence?: string; message?: string } = {}): SeqFinish {
    return { seqId: this.id, reason, promptTokens: this.promptTokens, outputTokens: this.generated, ...extra };
  }
}
