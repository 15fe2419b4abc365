// Compiles JSON-output constraints for one model's vocabulary through xgrammar (WebAssembly), once per schema,
// keeping the most recently used compiled grammars up to a bound; numbers are bounded to finite doubles.
import * as xg from "@mlc-ai/web-xgrammar";
import { ConstraintMatcher } from "./constraint-matcher.ts";
import type { GrammarVocab } from "./grammar-vocab.ts";
import { boundNumbers } from "./bounded-numbers.ts";
import { hoistRootRecursion } from "./root-recursion.ts";
import { checkSchemaSubset } from "../../../src/protocol/schema-subset.ts";

/** What the output must be: one instance of a JSON Schema (strict subset), or any JSON object. */
export type ConstraintSpec = { kind: "json_schema"; schema: Record<string, unknown> } | { kind: "json_object" };

export interface CompilerOptions {
  /** Compiled grammars kept (least recently used dropped first). Default 64. */
  cacheSize?: number;
  /**
   * Whitespace characters allowed wherever JSON allows whitespace. Default 1: room for `": "` and `", "` as
   * models usually write them, while a model that keeps choosing whitespace cannot stall the answer.
   */
  maxWhitespace?: number;
}

export interface MatcherOptions {
  /** Ids allowed once the JSON is complete, ending the row (default: the vocabulary's stop ids). */
  stopIds?: number[];
}

/** A constraint ready to start rows from; cheap to share between any number of rows. */
export class CompiledConstraint {
  private evicted = false;
  private released = false;
  /** Matchers being created right now: the grammar is freed only after they hold their own reference. */
  private starting = 0;

  constructor(
    private readonly grammar: xg.CompiledGrammar,
    private readonly vocab: GrammarVocab,
  ) {}

  /** Whether the cache has dropped it (start rows through ConstraintCompiler.matcher to never meet that). */
  get disposed(): boolean {
    return this.evicted;
  }

  /**
   * A fresh matcher at the start of the output. Call dispose() on it when its row ends. `stopIds` replaces the
   * vocabulary's stop ids for this row: e.g. `</tool_call>` ends a tool call's arguments instead of EOS.
   */
  async matcher(opts: MatcherOptions = {}): Promise<ConstraintMatcher> {
    if (this.evicted) throw new Error("this compiled constraint was evicted from the cache; compile it again");
    const stopIds = opts.stopIds ?? this.vocab.stopIds;
    if (stopIds.length === 0 || stopIds.some((id) => !(Number.isInteger(id) && id >= 0 && id < this.vocab.size))) {
      throw new Error(`stop ids must be a non-empty list of ids in 0..${this.vocab.size - 1}`);
    }
    this.starting++;
    try {
      return new ConstraintMatcher(await xg.GrammarMatcher.createGrammarMatcher(this.grammar, opts.stopIds), this.vocab, stopIds);
    } finally {
      this.starting--;
      if (this.evicted) this.release();
    }
  }

  /** Frees the compiled grammar once no matcher is being started; started matchers stay usable. */
  dispose(): void {
    this.evicted = true;
    this.release();
  }

  private release(): void {
    if (this.starting > 0 || this.released) return;
    this.released = true;
    this.grammar.dispose();
  }
}

/**
 * "Any JSON object" (json_object) as a schema, so xgrammar's own JSON generator writes the grammar. A hand-written
 * EBNF was tried and xgrammar 0.1.27 matched it wrongly (a quote accepted right after a member's value), and its
 * built-in JSON grammar admits arrays and scalars at the root.
 */
export const ANY_JSON_OBJECT: Record<string, unknown> = {
  $defs: {
    value: {
      anyOf: [
        { type: "object", additionalProperties: { $ref: "#/$defs/value" } },
        { type: "array", items: { $ref: "#/$defs/value" } },
        { type: "string" },
        { type: "number" },
        { type: "boolean" },
        { type: "null" },
      ],
    },
  },
  type: "object",
  additionalProperties: { $ref: "#/$defs/value" },
};

/** Canonical text of a spec: key order does not matter, so equal schemas share one cache entry. */
export function specKey(spec: ConstraintSpec): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (typeof v !== "object" || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = canon((v as Record<string, unknown>)[k]);
    return out;
  };
  return JSON.stringify(canon(spec));
}

export class ConstraintCompiler {
  private readonly cache = new Map<string, Promise<CompiledConstraint>>();
  private readonly cacheSize: number;
  private readonly maxWhitespace: number;

  private constructor(
    private readonly compiler: xg.GrammarCompiler,
    private readonly info: xg.TokenizerInfo,
    readonly vocab: GrammarVocab,
    opts: CompilerOptions,
  ) {
    this.cacheSize = Math.max(1, opts.cacheSize ?? 64);
    this.maxWhitespace = opts.maxWhitespace ?? 1;
  }

  /** Loads xgrammar (first call in a thread) and indexes the vocabulary: once per model per worker. */
  static async create(vocab: GrammarVocab, opts: CompilerOptions = {}): Promise<ConstraintCompiler> {
    const info = await xg.TokenizerInfo.createTokenizerInfo(vocab.byteLevel, "byte_level", false, vocab.size, vocab.stopIds);
    // xgrammar's own cache is unbounded; this class keeps the bounded one.
    const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false);
    return new ConstraintCompiler(compiler, info, vocab, opts);
  }

  /**
   * The compiled constraint for `spec`, from the cache when it was compiled before. Throws
   * UnsupportedSchemaError (naming the keyword) for a schema outside the supported subset.
   */
  compile(spec: ConstraintSpec): Promise<CompiledConstraint> {
    if (spec.kind === "json_schema") checkSchemaSubset(spec.schema);
    const key = specKey(spec);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const pending = this.build(spec);
    this.cache.set(key, pending);
    // A failed compile is not kept: the same spec is retried (and fails the same way) rather than cached.
    pending.catch(() => this.cache.get(key) === pending && this.cache.delete(key));
    while (this.cache.size > this.cacheSize) {
      const [oldest, entry] = this.cache.entries().next().value!;
      this.cache.delete(oldest);
      entry.then((c) => c.dispose(), () => {});
    }
    return pending;
  }

  /**
   * A matcher for a new row under `spec`: compiles (or reuses) and starts it with no chance for the cache to
   * free the grammar in between. Throws UnsupportedSchemaError like compile().
   */
  async matcher(spec: ConstraintSpec, opts: MatcherOptions = {}): Promise<ConstraintMatcher> {
    for (;;) {
      const compiled = await this.compile(spec);
      // Other compiles may have run while this one was awaited and evicted it: compile again then.
      if (!compiled.disposed) return compiled.matcher(opts);
    }
  }

  /** Compiled grammars currently cached. */
  get cached(): number {
    return this.cache.size;
  }

  /** Frees everything; matchers already started stay usable. */
  dispose(): void {
    for (const entry of this.cache.values()) entry.then((c) => c.dispose(), () => {});
    this.cache.clear();
    this.compiler.dispose();
    this.info.dispose();
  }

  private async build(spec: ConstraintSpec): Promise<CompiledConstraint> {
    try {
      const schema = JSON.stringify(spec.kind === "json_schema" ? hoistRootRecursion(spec.schema) : ANY_JSON_OBJECT);
      // The converter behind compileJSONSchema, called directly so its EBNF can be bounded before it is compiled.
      const ebnf =
        this.maxWhitespace === 0
          ? await xg.Testings._jsonSchemaToEBNF(schema, false, -1, [",", ":"], true)
          : await xg.Testings._jsonSchemaToEBNF(schema, true, -1, undefined, true, this.maxWhitespace);
      return new CompiledConstraint(await this.compiler.compileGrammar(boundNumbers(ebnf)), this.vocab);
    } catch (e) {
      // The subset check runs first, so this is xgrammar failing on a schema it should accept.
      throw new Error(`could not compile the output constraint: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
