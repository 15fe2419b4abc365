// Where billing holds are kept: the interface (this process's memory, or Redis shared by replicas: redis-holds.ts), the
// pure bookkeeping both follow, and the in-process store.

export type HoldResult = { ok: true; available: number } | { ok: false; available: number };

export interface HoldStore {
  /**
   * Taken before the caller reads the team's balance: holds released after the mark still count in `hold`, because
   * their charges may be missing from the balance read (the settling request writes its charge, then releases).
   */
  mark(teamId: number): Promise<number>;
  /**
   * Holds `micros` under `holdId` when `budget` (the balance less charges not yet in it, read after `mark`) less what
   * is held covers it: one atomic step against every racing hold that shares the store. `available` is what was left
   * before this hold (refused) or after it (held).
   */
  hold(teamId: number, holdId: string, micros: number, budget: number, mark: number): Promise<HoldResult>;
  /** Gives a hold back; an unknown or already released id changes nothing. */
  release(teamId: number, holdId: string): Promise<void>;
  /** What the team's running requests hold now. */
  heldBy(teamId: number): Promise<number>;
  close(): void;
}

/** How long a released hold still counts for callers whose mark is older than its release. */
export const RELEASED_KEPT_MS = 60_000;

/** A released hold: its amount and its place in the team's order of releases. */
export interface Released {
  micros: number;
  seq: number;
}

/** What counts against the budget for a caller that took `mark`: every running hold, and what was released since the mark. */
export function heldSince(active: Iterable<number>, released: Iterable<Released>, mark: number): number {
  let held = 0;
  for (const micros of active) held += micros;
  for (const r of released) if (r.seq > mark) held += r.micros;
  return held;
}

/** The decision: the hold fits when it is no more than the budget less what is held. */
export function decide(micros: number, budget: number, held: number): HoldResult {
  const available = budget - held;
  return micros > available ? { ok: false, available } : { ok: true, available: available - micros };
}

interface TeamHolds {
  active: Map<string, number>;
  released: (Released & { at: number })[];
  seq: number;
}

/** Holds in this process's memory: each call runs to its end in one turn of the event loop, so it is atomic. */
export class MemoryHoldStore implements HoldStore {
  private readonly teams = new Map<number, TeamHolds>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  private team(teamId: number): TeamHolds {
    let h = this.teams.get(teamId);
    if (!h) this.teams.set(teamId, (h = { active: new Map(), released: [], seq: 0 }));
    const cutoff = this.now() - RELEASED_KEPT_MS;
    while (h.released.length && h.released[0]!.at < cutoff) h.released.shift();
    return h;
  }

  async mark(teamId: number): Promise<number> {
    return this.team(teamId).seq;
  }

  async hold(teamId: number, holdId: string, micros: number, budget: number, mark: number): Promise<HoldResult> {
    const h = this.team(teamId);
    const result = decide(micros, budget, heldSince(h.active.values(), h.released, mark));
    if (result.ok) h.active.set(holdId, micros);
    return result;
  }

  async release(teamId: number, holdId: string): Promise<void> {
    const h = this.team(teamId);
    const micros = h.active.get(holdId);
    if (micros === undefined) return;
    h.active.delete(holdId);
    h.released.push({ micros, seq: ++h.seq, at: this.now() });
  }

  async heldBy(teamId: number): Promise<number> {
    return heldSince(this.team(teamId).active.values(), [], Infinity);
  }

  close(): void {}
}
