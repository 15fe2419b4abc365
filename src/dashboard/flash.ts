// What a form's redirect hands the next page, per session: a one-shot notice for whichever page comes next, and the
// full text of keys just created, each waiting for its own team's keys page (so a key is never shown under another
// team, nor lost to another page), read once and never written to the database. This is the store of one kiln, in its
// memory; with several replicas the next page may be served by another, so they share redis-flash.ts's.
export interface Flash {
  notice?: string;
}

export interface CreatedKey {
  teamId: number;
  id: number;
  name: string;
  key: string;
}

/** A notice or key not picked up in this time is dropped (the browser never followed the redirect). */
export const TTL_MS = 5 * 60_000;

export interface FlashStore {
  /** The notice for the next page of the session (a newer one replaces one not yet shown). */
  put(sessionHash: string, flash: Flash): Promise<void>;
  /** The session's notice, removed as it is read; null when there is none (or it is too old). */
  take(sessionHash: string): Promise<Flash | null>;
  /** A key just created, held until its team's keys page is next shown in this session. */
  putKey(sessionHash: string, key: CreatedKey): Promise<void>;
  /** The keys of `teamId` created in this session and not shown yet, oldest first, removed as they are read; other teams' stay. */
  takeKeys(sessionHash: string, teamId: number): Promise<CreatedKey[]>;
  /** Everything the session had waiting (it signed out). */
  drop(sessionHash: string): Promise<void>;
}

export class MemoryFlashStore implements FlashStore {
  private readonly notices = new Map<string, { flash: Flash; at: number }>();
  private readonly keys = new Map<string, { key: CreatedKey; at: number }[]>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  private sweep(t: number): void {
    for (const [k, v] of this.notices) if (t - v.at >= TTL_MS) this.notices.delete(k);
    for (const [k, list] of this.keys) {
      const live = list.filter((e) => t - e.at < TTL_MS);
      if (live.length) this.keys.set(k, live);
      else this.keys.delete(k);
    }
  }

  async put(sessionHash: string, flash: Flash): Promise<void> {
    const t = this.now();
    this.sweep(t);
    this.notices.set(sessionHash, { flash, at: t });
  }

  async take(sessionHash: string): Promise<Flash | null> {
    const v = this.notices.get(sessionHash);
    this.notices.delete(sessionHash);
    return v && this.now() - v.at < TTL_MS ? v.flash : null;
  }

  async putKey(sessionHash: string, key: CreatedKey): Promise<void> {
    const t = this.now();
    this.sweep(t);
    this.keys.set(sessionHash, [...(this.keys.get(sessionHash) ?? []), { key, at: t }]);
  }

  async takeKeys(sessionHash: string, teamId: number): Promise<CreatedKey[]> {
    const t = this.now();
    const list = this.keys.get(sessionHash) ?? [];
    const mine = list.filter((e) => e.key.teamId === teamId && t - e.at < TTL_MS).map((e) => e.key);
    const rest = list.filter((e) => e.key.teamId !== teamId);
    if (rest.length) this.keys.set(sessionHash, rest);
    else this.keys.delete(sessionHash);
    return mine;
  }

  async drop(sessionHash: string): Promise<void> {
    this.notices.delete(sessionHash);
    this.keys.delete(sessionHash);
  }
}
