// One-shot messages carried from a form's redirect to the page it lands on, per session, in memory only: a new
// key's full text waits here for the single page that shows it and is never written anywhere.
export interface Flash {
  notice?: string;
  /** A key just created: shown once, in full, by the next page of the session. */
  createdKey?: { id: number; name: string; key: string };
}

/** A flash not picked up in this time is dropped (the browser never followed the redirect). */
const TTL_MS = 5 * 60_000;

export class FlashStore {
  private readonly held = new Map<string, { flash: Flash; at: number }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  put(sessionHash: string, flash: Flash): void {
    const t = this.now();
    for (const [k, v] of this.held) if (t - v.at >= TTL_MS) this.held.delete(k);
    this.held.set(sessionHash, { flash, at: t });
  }

  /** The session's flash, removed as it is read; null when there is none (or it is too old). */
  take(sessionHash: string): Flash | null {
    const v = this.held.get(sessionHash);
    this.held.delete(sessionHash);
    return v && this.now() - v.at < TTL_MS ? v.flash : null;
  }

  drop(sessionHash: string): void {
    this.held.delete(sessionHash);
  }
}
