// Picks a row's next token from its logits: a forced token first, else penalties and bias, the banned ids (a
// second tool call's open marker too) and the grammar's mask, top-k, min-p, then the sampler (temperature and top-p).
import type { SeqFinish, TokenLogprob } from "../../src/protocol/text.ts";
import { applyMinP } from "./logit-adjust.ts";
import { Sampler } from "./sampler.ts";
import type { Sequence } from "./sequence.ts";
import { rawDistribution, tokenLogprob } from "./token-logprobs.ts";
import { TopK } from "./top-k.ts";

export interface RowOutcome {
  text: string;
  tokens: number;
  finish?: SeqFinish;
  /** The token's log probability, when the sequence asked and the token is not a stop token. */
  logprob?: TokenLogprob;
}

export class RowSampler {
  private readonly sampler = new Sampler();
  private readonly topK = new TopK();

  constructor(
    private readonly maxContext: number,
    private readonly tokenBytes: (id: number) => Uint8Array,
  ) {}

  /** Samples and accepts the sequence's next token from `logits` (its row, modified in place); a failure ends it. */
  next(seq: Sequence, logits: Float32Array): RowOutcome {
    try {
      const forced = seq.forcedToken();
      // The model's own distribution, read before anything below changes the row.
      const dist = seq.params.logprobs !== undefined ? rawDistribution(logits, seq.params.logprobs) : null;
      if (forced === null) {
        const { temperature, topK, minP } = seq.params;
        seq.adjust?.apply(logits);
        // The masks come before the filters, so top-k, min-p and top-p choose among allowed tokens only.
        for (const id of seq.params.bannedTokenIds ?? []) logits[id] = -Infinity;
        seq.singleCall?.restrict(logits);
        seq.constraint?.restrict(logits);
        if (topK && temperature > 0) this.topK.apply(logits, topK);
        if (minP) applyMinP(logits, minP, temperature);
      }
      const token = forced ?? this.sampler.sample(logits, seq.params, seq.rng);
      const outcome = seq.accept(token, this.maxContext);
      const logprob = dist && !seq.params.stopTokenIds.includes(token) ? tokenLogprob(dist, token, this.tokenBytes) : undefined;
      return { text: outcome.text, tokens: 1, finish: outcome.finish, ...(logprob ? { logprob } : {}) };
    } catch (err) {
      const message = `sampling failed: ${err instanceof Error ? err.message : String(err)}`;
      return { text: "", tokens: 0, finish: seq.finish("error", { message }) };
    }
  }
}
