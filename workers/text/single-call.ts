// One sequence's "at most one tool call" rule (parallel_tool_calls: false): once a call opened, its open marker is
// banned for the rest of the sequence, and the call's close marker ends the sequence, so the turn holds one call.
import type { SingleCall } from "../../src/protocol/text.ts";

export class SingleCallGuard {
  private opened: boolean;
  /** Inside the thinking block the sequence starts in. */
  private thinking: boolean;

  constructor(private readonly c: SingleCall) {
    this.opened = !!c.opened;
    this.thinking = c.startAfter !== undefined;
  }

  /** Sets the open marker's logit to -Infinity once a call opened: no second call can start. */
  restrict(logits: Float32Array): void {
    if (this.opened && this.c.openId !== undefined && this.c.openId < logits.length) logits[this.c.openId] = -Infinity;
  }

  /** Records a written token, sampled or forced; true when it is the close of the turn's call: the sequence ends with it. */
  accept(token: number): boolean {
    if (this.thinking) {
      this.thinking = token !== this.c.startAfter;
      return false;
    }
    if (!this.opened) {
      this.opened = token === this.c.openId;
      return false;
    }
    return token === this.c.closeId;
  }
}
