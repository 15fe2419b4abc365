// The worker's one grammar compiler per model, made on the first constrained request: building the grammar
// vocabulary and loading xgrammar cost about a second on a large vocabulary, which unconstrained use never pays.
import type { ConstraintSpec } from "../../src/protocol/text.ts";
import { ConstraintCompiler } from "./grammar/constraint-compiler.ts";
import type { ConstraintMatcher } from "./grammar/constraint-matcher.ts";
import { grammarVocabFromTokenizer } from "./grammar/grammar-vocab.ts";
import type { ConstraintSource } from "./row-constraint.ts";
import type { TokenizerJson } from "./token-bytes.ts";

/** Compiled grammars kept per model (least recently used dropped first). */
const CACHE_SIZE = 64;

export class LazyConstraintSource implements ConstraintSource {
  private compiler: Promise<ConstraintCompiler> | null = null;

  constructor(
    readonly vocabSize: number,
    private readonly tokenizerJson: TokenizerJson,
    /** The model's end ids: never JSON text, and what ends a constrained answer unless a row names its own. */
    private readonly eosIds: number[],
  ) {}

  async matcher(spec: ConstraintSpec, opts: { stopIds: number[] }): Promise<ConstraintMatcher> {
    this.compiler ??= this.create();
    return (await this.compiler).matcher(spec, opts);
  }

  private create(): Promise<ConstraintCompiler> {
    const made = (async () => {
      const vocab = grammarVocabFromTokenizer(this.tokenizerJson, { size: this.vocabSize, stopIds: this.eosIds });
      return ConstraintCompiler.create(vocab, { cacheSize: CACHE_SIZE });
    })();
    // A failed set-up (e.g. a decoder that is not byte-exact) fails its requests; the next one tries again.
    made.catch(() => {
      if (this.compiler === made) this.compiler = null;
    });
    return made;
  }
}
