// Picks a row's next token from its logits: a forced token first, else the banned ids and the grammar's mask, top-k,
// then the sampler.
import type { SeqFinish } from "../../src/scheduler/protocol.ts";
import { Sampler } from "./sampler.ts";
import type { Sequence } from "./sequence.ts";
import { TopK } from "./top-k.ts";

export interface RowOutcome {
  text: string;
  tokens: number;
  finish?: SeqFinish;
}

export class RowSampler {
  private readonly sampler = new Sampler();
  private readonly topK = new TopK();

  constructor(private readonly maxContext: number) {}

  /** Samples and accepts the sequence's next token from `logits` (its row, modified in place); a failure ends it. */
  next(seq: Sequence, logits: Float32Array): RowOutcome {
    try {
      const forced = seq.forcedToken();
      // The masks come first, so top-k and top-p choose among allowed tokens only.
      if (forced === null) {
        for (const id of seq.params.bannedTokenIds ?? []) logits[id] = -Infinity;
        seq.constraint?.restrict(logits);
      }
      if (forced === null && seq.params.topK && seq.params.temperature > 0) this.topK.apply(logits, seq.params.topK);
      const token = forced ?? this.sampler.sample(logits, seq.params, seq.rng);
      const outcome = seq.accept(token, this.maxContext);
      return { text: outcome.text, tokens: 1, finish: outcome.finish };
    } catch (err) {
      const message = `sampling failed: ${err instanceof Error ? err.message : String(err)}`;
      return { text: "", tokens: 0, finish: seq.finish("error", { message }) };
    }
  }
}
