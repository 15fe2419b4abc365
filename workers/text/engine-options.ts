// What a text engine is given (workers/text/engine.ts): its batch size, how it reports, and the parts it consults.
import type { SeqDelta, SeqFinish, StepBatch } from "../../src/protocol/text.ts";
import type { EngineClock } from "./lane-pace.ts";
import type { PrefixReuse } from "./prefix-reuse.ts";
import type { ConstraintSource } from "./row-constraint.ts";

export interface EngineOptions {
  /** Most sequences decoded together; extra ones wait in the queue. */
  maxBatch: number;
  tokenBytes: (id: number) => Uint8Array;
  /** Receives one report per step (and one for sequences that ended outside a step); `batch` after a decode pass. */
  emit(deltas: SeqDelta[], finished: SeqFinish[], batch?: StepBatch): void;
  /** Called when a queued sequence's media finished preprocessing or failed: the engine has work again. */
  wake?: () => void;
  /**
   * Prompt tokens prefilled per step, so running sequences never stall long behind newcomers. Short prompts are
   * prefilled together within it (padding counted); a longer prompt is prefilled alone in chunks of this size, smaller
   * once its context is long (chunk-width.ts).
   */
  prefillTokenBudget?: number;
  /** Where constrained sequences get their grammar matchers; without it, constrained adds fail. */
  constraints?: ConstraintSource;
  /** The prefix cache and the prefill figures (absent: nothing cached, figures kept). */
  prefix?: PrefixReuse;
  /**
   * Lets messages that arrived during a pass reach the engine (add, cancel). Called after a decode pass beside background
   * work, so an interactive request that arrived during it stops this step's background prefill (absent: not checked).
   */
  takeArrivals?: () => Promise<void>;
  /** The engine's clock, for the grace background prompts give interactive work (lane-pace.ts). */
  clock?: EngineClock;
}
