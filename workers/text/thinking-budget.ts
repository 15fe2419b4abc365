// Keeps a sequence's thinking within its budget: counts the tokens spent inside the thinking block and, once the
// budget is spent without the model closing it, hands out the close marker's tokens for the sequence to force.
import type { ThinkingBudget } from "../../src/protocol/text.ts";

export class ThinkingTracker {
  private spent = 0;
  private open = true;
  private pendingClose: number[] | null = null;

  constructor(private readonly b: ThinkingBudget) {
    if (b.budget === 0) this.close();
  }

  /** True while the sequence is still inside its thinking block. */
  get thinking(): boolean {
    return this.open;
  }

  /** The close marker and its framing once the budget is spent (handed out once), else null. */
  takeForced(): number[] | null {
    const ids = this.pendingClose;
    this.pendingClose = null;
    return ids;
  }

  /** Records a token the model chose (tokens the sequence forced are not counted). */
  accept(token: number): void {
    if (!this.open) return;
    if (token === this.b.closeTokenId) {
      this.open = false;
      return;
    }
    if (++this.spent >= this.b.budget) this.close();
  }

  private close(): void {
    this.open = false;
    this.pendingClose = [...this.b.forceIds];
  }
}
