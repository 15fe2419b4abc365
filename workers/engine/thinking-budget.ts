// Keeps a sequence's thinking within its budget: counts the tokens spent inside the thinking block and, once the
// budget is spent without the model closing the block, hands out the close marker's tokens to be written as forced.
import type { ThinkingBudget } from "../../src/scheduler/protocol.ts";

export class ThinkingTracker {
  private spent = 0;
  private open = true;
  private forced: number[] = [];

  constructor(private readonly b: ThinkingBudget) {
    if (b.budget === 0) this.close();
  }

  /** True while the sequence is still inside its thinking block. */
  get thinking(): boolean {
    return this.open;
  }

  /** The next token to write instead of sampling, while the close marker is being forced. */
  nextForced(): number | null {
    return this.forced.length ? this.forced[0]! : null;
  }

  /** Records a generated token (sampled or forced). */
  accept(token: number): void {
    if (this.forced.length) {
      if (token === this.forced[0]) this.forced.shift();
      return;
    }
    if (!this.open) return;
    if (token === this.b.closeTokenId) {
      this.open = false;
      return;
    }
    if (++this.spent >= this.b.budget) this.close();
  }

  private close(): void {
    this.open = false;
    this.forced = [...this.b.forceIds];
  }
}
