// Finds text stop sequences across token boundaries, holding back any tail that could still grow into one.

export interface StopResult {
  /** Text that is safe to emit now. */
  emit: string;
  /** The stop sequence that matched; nothing after `emit` may be emitted any more. */
  stop?: string;
}

export class StopMatcher {
  private readonly stops: string[];
  private held = "";

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  push(text: string): StopResult {
    if (this.stops.length === 0) return { emit: text };
    const pending = this.held + text;
    let at = -1;
    let which: string | undefined;
    for (const s of this.stops) {
      const i = pending.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        which = s;
      }
    }
    if (which !== undefined) {
      this.held = "";
      return { emit: pending.slice(0, at), stop: which };
    }
    const keep = this.partialTail(pending);
    this.held = pending.slice(pending.length - keep);
    return { emit: pending.slice(0, pending.length - keep) };
  }

  /** Releases held-back text when the sequence ends for another reason. */
  flush(): string {
    const out = this.held;
    this.held = "";
    return out;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop sequence. */
  private partialTail(text: string): number {
    let longest = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, text.length); k > longest; k--) {
        if (text.endsWith(s.slice(0, k))) {
          longest = k;
          break;
        }
      }
    }
    return longest;
  }
}
