// One-shot messages carried from a form's redirect to the page it lands on, per session, in memory only: a new
// key's full text waits here for the single page that shows it and is never written anywhere.
export interface Flash {
  notice?: string;
  /** Keys just created (two quick clicks make two): each shown once, in full, by the next page of the session. */
  createdKeys?: { id: number; name: string; key: string }[];
}

/** A flash not picked up in this time is dropped (the browser never followed the redirect). */
const TTL_MS = 5 * 60_000;

export class FlashStore {
  private readonly held = new Map<string, { flash: Flash; at: number }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** A new notice replaces one not yet shown; new keys join the ones not yet shown, so none is lost unseen. */
  put(sessionHash: string, flash: Flash): void {
    const t = this.now();
    for (const [k, v] of this.held) if (t - v.at >= TTL_MS) this.held.delete(k);
    const keys = [...(this.held.get(sessionHash)?.flash.createdKeys ?? []), ...(flash.createdKeys ?? [])];
    this.held.set(sessionHash, { flash: { ...flash, ...(keys.length ? { createdKeys: keys } : {}) }, at: t });
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
