// One generation request inside the engine: its sampling state, text stream, the tokens the worker writes itself
// (a thinking close, a constraint's close) and the rules that end it.
import type { ServiceTier } from "../../src/inference/service-tier.ts";
import type { MediaInput, SamplingParams, SeqEndReason, SeqFinish } from "../../src/protocol/text.ts";
import { LogitAdjuster } from "./logit-adjust.ts";
import type { PrefixState } from "./prefix-reuse.ts";
import { createRng } from "./prng.ts";
import { type ConstraintSource, type ConstraintStep, RowConstraint } from "./row-constraint.ts";
import { SequenceMedia } from "./sequence-media.ts";
import { SequenceText } from "./sequence-text.ts";
import { SingleCallGuard } from "./single-call.ts";
import { ThinkingTracker } from "./thinking-budget.ts";

export interface TokenOutcome {
  /** Text delta for this token. */
  text: string;
  /** Present when the sequence ended with this token. */
  finish?: SeqFinish;
}

const GO: ConstraintStep = { kind: "go" };

export class Sequence {
  readonly rng: () => number;
  readonly promptTokens: number;
  generated = 0;
  /** The newest sampled token, fed at the next decode step. */
  lastToken = -1;
  cancelled = false;
  /** Its path through the prefix cache (null: it neither reads nor writes it). */
  prefix: PrefixState | null = null;
  /** Prompt tokens whose KV came from the prefix cache. */
  cached = 0;
  /** Its lane (absent: default): background lanes yield their row to interactive work. */
  lane: ServiceTier | undefined;
  /** Present when the output is held to a grammar. */
  readonly constraint: RowConstraint | null;
  /** The prompt's images and audio clips (none for text prompts). */
  readonly media: SequenceMedia;
  /** Penalties and logit bias, when the request asks for any. */
  readonly adjust: LogitAdjuster | null;
  /** At most one tool call, when the request asks for that. */
  readonly singleCall: SingleCallGuard | null;
  private readonly text: SequenceText;
  private readonly thinking: ThinkingTracker | null;
  /** Tokens to write next instead of sampling, in order: one queue for every reason the worker writes tokens. */
  private readonly forced: number[] = [];

  constructor(
    readonly id: string,
    readonly promptIds: number[],
    readonly params: SamplingParams,
    tokenBytes: (id: number) => Uint8Array,
    constraints?: ConstraintSource,
    media: readonly MediaInput[] = [],
  ) {
    this.promptTokens = promptIds.length;
    this.media = new SequenceMedia(media);
    this.rng = createRng(params.seed);
    this.adjust = LogitAdjuster.for(params, promptIds);
    this.text = new SequenceText(tokenBytes, params.stop, params.stopTokenIds, params.silentTokenIds);
    this.thinking = params.thinking ? new ThinkingTracker(params.thinking) : null;
    this.singleCall = params.singleCall ? new SingleCallGuard(params.singleCall) : null;
    this.forced.push(...(this.thinking?.takeForced() ?? []));
    if (params.constraint && !constraints) throw new Error("this model's output cannot be constrained");
    this.constraint = params.constraint ? new RowConstraint(params.constraint, constraints!) : null;
  }

  /** A token the sequence must write next instead of sampling (a spent thinking budget, a constraint's close), or null. */
  forcedToken(): number | null {
    return this.forced.length ? this.forced[0]! : null;
  }

  /** Records a generated token and applies the stop rules, in order: stop sequence, stop token, max tokens, context. */
  accept(token: number, maxContext: number): TokenOutcome {
    const forced = this.forced.length > 0 && this.forced[0] === token;
    if (forced) this.forced.shift();
    else this.thinking?.accept(token);
    this.forced.push(...(this.thinking?.takeForced() ?? []));
    // Text stop sequences are looked for in free output only: not before a required answer, nor inside its JSON.
    const matchStops = !this.constraint || this.constraint.stopsApply;
    const step = this.constraint?.accept(token, forced) ?? GO;
    this.generated++;
    if (step.kind === "fail") return { text: this.text.end(), finish: this.finish("error", { message: step.message }) };
    if (step.kind === "force") this.forced.push(...step.ids);
    if (step.kind === "close") {
      // The model chose to end the JSON; the worker writes the close instead (its first token in this step).
      token = step.ids[0]!;
      this.forced.push(...step.ids.slice(1));
    }
    this.lastToken = token;
    this.adjust?.record(token);
    const callClosed = this.singleCall?.accept(token) ?? false;
    // The end id a constraint allowed ends the sequence even when it is not a stop token (e.g. with ignore_eos).
    if (step.kind === "end" && !this.params.stopTokenIds.includes(token)) return { text: this.text.end(), finish: this.finish("stop") };
    const out = this.text.push(token, matchStops);
    if (out.stopSequence !== undefined) return { text: out.text, finish: this.finish("stop", { stopSequence: out.stopSequence }) };
    // The turn's one call is whole: nothing more is written (the close marker is this turn's last token).
    if (out.stopToken || callClosed) return { text: out.text + this.text.end(), finish: this.finish("stop") };
    if (this.generated >= this.params.maxTokens || this.promptTokens + this.generated >= maxContext) {
      return { text: out.text + this.text.end(), finish: this.finish("length") };
    }
    return { text: out.text };
  }

  /** The sequence's end report; frees its constraint (every way a sequence ends comes through here). */
  finish(reason: SeqEndReason, extra: { stopSequence?: string; message?: string } = {}): SeqFinish {
    this.constraint?.dispose();
    return { seqId: this.id, reason, promptTokens: this.promptTokens, ...(this.cached ? { cachedTokens: this.cached } : {}), outputTokens: this.generated, ...extra };
  }
}
