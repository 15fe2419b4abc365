// One sequence's output constraint inside the engine: when it starts (after thinking), the mask for the next
// token (filled while the forward pass runs), the advance by each sampled token, and the worker-written close.
import type { ConstraintSpec, OutputConstraint } from "../../src/protocol/text.ts";
import type { ConstraintMatcher } from "./grammar/constraint-matcher.ts";
import { applyMask, maskWords } from "./grammar/token-mask.ts";

/** Where constrained rows get their matchers: one compiler per model, built on the first constrained request. */
export interface ConstraintSource {
  /** Rows of logits the model produces; masks cover this many ids. */
  readonly vocabSize: number;
  matcher(spec: ConstraintSpec, opts: { stopIds: number[] }): Promise<ConstraintMatcher>;
}

/** What a token did to the constraint, for the sequence to act on. */
export type ConstraintStep =
  /** Nothing to act on. */
  | { kind: "go" }
  /** Tokens the worker must write next (the framing after a thinking close). */
  | { kind: "force"; ids: number[] }
  /** The JSON is whole and the model chose an end id: write `ids` instead of it (the first one now). */
  | { kind: "close"; ids: number[] }
  /** The JSON is whole and the model chose an end id: the sequence ends here. */
  | { kind: "end" }
  /** The grammar refused a token the mask allowed, or the matcher could not be made: the sequence fails. */
  | { kind: "fail"; message: string };

/** waiting: for the thinking close; armed: free output until the trigger; active: JSON; closed: done for good. */
type State = "waiting" | "armed" | "active" | "closed";

export class RowConstraint {
  private state: State;
  private matcher: ConstraintMatcher | null = null;
  private starting: Promise<void> | null = null;
  private mask: Uint32Array | null = null;
  private problem: string | null = null;
  private disposed = false;

  constructor(
    private readonly c: OutputConstraint,
    private readonly source: ConstraintSource,
  ) {
    this.state = c.startAfter ? "waiting" : c.trigger ? "armed" : "active";
    if (this.state === "active") this.start();
  }

  /**
   * True while the client's text stop sequences apply: outside a triggered span, the thinking before it included.
   * Never before a required answer (a forced call, a JSON format): a stop inside the thinking would leave it unwritten.
   */
  get stopsApply(): boolean {
    return this.state === "armed" || (this.state === "waiting" && !!this.c.trigger);
  }

  /** Whether the next token the model chooses must come from the mask (the JSON has begun and is not whole). */
  get masking(): boolean {
    return this.state === "active";
  }

  /**
   * Fills the mask for the next token from the matcher's current state. Run while the forward pass runs: it only
   * depends on tokens already accepted. Never throws; a failure is kept and fails the row when it samples.
   */
  async prepare(): Promise<void> {
    if (this.state !== "active" || this.problem !== null) return;
    try {
      if (!this.matcher) await this.starting;
      if (this.disposed || !this.matcher) return;
      this.mask ??= new Uint32Array(maskWords(this.source.vocabSize));
      await this.matcher.fillMask(this.mask);
    } catch (e) {
      this.problem = `output constraint failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /**
   * Sets every token the grammar refuses to -Infinity in this row's logits; throws when the constraint failed. Before
   * a thinking block closes, an answer that must follow it (not a triggered span, which is optional) may not be
   * skipped: the end ids are refused, so the model thinks on until it closes the block or its budget does.
   */
  restrict(logits: Float32Array): void {
    if (this.state === "waiting" && !this.c.trigger) {
      for (const id of this.c.stopIds) if (id < logits.length) logits[id] = -Infinity;
      return;
    }
    if (this.state !== "active") return;
    if (this.problem !== null) throw new Error(this.problem);
    if (!this.mask) throw new Error("output constraint: no mask was prepared for this step");
    applyMask(logits, this.mask);
  }

  /** Advances by a generated token; `forced` tokens were written by the worker, not chosen by the model. */
  accept(token: number, forced: boolean): ConstraintStep {
    if (this.state === "waiting") {
      if (token !== this.c.startAfter!.tokenId) return { kind: "go" };
      if (this.c.trigger) {
        this.state = "armed";
        return forced ? { kind: "go" } : { kind: "force", ids: [...this.c.startAfter!.framingIds] };
      }
      this.state = "active";
      this.start();
      // A close forced by the thinking budget already carries its framing; one the model wrote does not.
      return forced || this.c.startAfter!.framingIds.length === 0 ? { kind: "go" } : { kind: "force", ids: [...this.c.startAfter!.framingIds] };
    }
    if (this.state === "armed") {
      if (forced || token !== this.c.trigger!.tokenId) return { kind: "go" };
      this.state = "active";
      this.start();
      return this.c.trigger!.framingIds.length ? { kind: "force", ids: [...this.c.trigger!.framingIds] } : { kind: "go" };
    }
    // Forced tokens inside an active constraint are the framing before the JSON starts: not grammar input.
    if (this.state !== "active" || forced) return { kind: "go" };
    if (this.problem !== null) return { kind: "fail", message: this.problem };
    const m = this.matcher;
    if (!m || !m.accept(token)) return { kind: "fail", message: `output constraint refused token ${token}, which its own mask allowed` };
    if (!this.c.stopIds.includes(token)) return { kind: "go" };
    // A triggered span ends and the row goes back to free output; otherwise the constraint is done.
    this.state = this.c.trigger ? "armed" : "closed";
    this.release();
    return this.c.closeIds?.length ? { kind: "close", ids: [...this.c.closeIds] } : { kind: "end" };
  }

  /** Frees the matcher (also one still being made); call when the sequence ends in any way. */
  dispose(): void {
    this.disposed = true;
    this.release();
  }

  private start(): void {
    this.starting = this.source.matcher(this.c.spec, { stopIds: this.c.stopIds }).then(
      (m) => {
        if (this.disposed) m.dispose();
        else this.matcher = m;
      },
      (e: unknown) => {
        this.problem = `output constraint failed: ${e instanceof Error ? e.message : String(e)}`;
      },
    );
  }

  private release(): void {
    this.matcher?.dispose();
    this.matcher = null;
    this.mask = null;
  }
}
