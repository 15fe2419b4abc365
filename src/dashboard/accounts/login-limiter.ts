// Sign-in attempts, counted per account and per address over a sliding minute. An attempt counts from the moment it
// starts, before its password is checked, so a burst of parallel guesses is limited like a sequence of them; a
// correct password takes its own attempt back. Past the limit, a sign-in is refused before any hash is checked.
// Accounts are counted only for names that are accounts (so their count is bounded by the users there are); under a
// flood of addresses, the oldest address counts are forgotten, never an account's.
import { addressUnit } from "../../http/ip-address.ts";
export interface LoginLimits {
  /** Attempts allowed in a window per account; the next one is refused unchecked. */
  perAccount: number;
  /** Attempts allowed in a window per address (higher: an office or a NAT shares one). */
  perAddress: number;
  windowMs: number;
}

export const LOGIN_LIMITS: LoginLimits = { perAccount: 5, perAddress: 20, windowMs: 60_000 };
/** Expired entries are swept once the map holds this many keys; past MAX_KEYS the oldest address keys are dropped. */
const SWEEP_AT = 10_000;
const MAX_KEYS = 100_000;

/** One attempt in progress: what `settle` takes back if its password was right. */
export interface Attempt {
  keys: string[];
  at: number;
}

export class LoginLimiter {
  /** "account:<name>" / "address:<ip or /64>" → start times of recent attempts, oldest first. */
  private readonly attempts = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(private readonly limits: LoginLimits = LOGIN_LIMITS, private readonly now: () => number = () => Date.now()) {}

  private recent(key: string, t: number): number[] {
    const list = (this.attempts.get(key) ?? []).filter((at) => t - at < this.limits.windowMs);
    if (list.length) this.attempts.set(key, list);
    else this.attempts.delete(key);
    return list;
  }

  private keys(account: string | null, address: string | null): [string, number][] {
    const keys: [string, number][] = [];
    if (account !== null) keys.push([`account:${account.toLowerCase()}`, this.limits.perAccount]);
    if (address !== null) keys.push([`address:${addressUnit(address)}`, this.limits.perAddress]);
    return keys;
  }

  /**
   * Starts an attempt: the milliseconds to wait when the account or the address is at its limit (nothing is
   * counted then), or the attempt, counted at once. `account` is null for a name that is no account.
   */
  begin(account: string | null, address: string | null): { waitMs: number } | { attempt: Attempt } {
    const t = this.now();
    const keys = this.keys(account, address);
    let waitMs = 0;
    for (const [key, limit] of keys) {
      const list = this.recent(key, t);
      if (list.length >= limit) waitMs = Math.max(waitMs, list[list.length - limit]! + this.limits.windowMs - t);
    }
    if (waitMs > 0) return { waitMs };
    this.sweep(t);
    for (const [key] of keys) this.attempts.set(key, [...(this.attempts.get(key) ?? []), t]);
    return { attempt: { keys: keys.map(([k]) => k), at: t } };
  }

  /** A correct password: its attempt no longer counts, and the account's earlier failures are forgiven. */
  succeed(a: Attempt): void {
    for (const key of a.keys) {
      if (key.startsWith("account:")) this.attempts.delete(key);
      else {
        const list = this.attempts.get(key) ?? [];
        const i = list.indexOf(a.at);
        if (i >= 0) list.splice(i, 1);
        if (!list.length) this.attempts.delete(key);
      }
    }
  }

  private sweep(t: number): void {
    if (this.attempts.size < SWEEP_AT || t - this.lastSweep < 1000) return;
    this.lastSweep = t;
    for (const key of [...this.attempts.keys()]) this.recent(key, t);
    // Still too many (a flood from many addresses): forget the oldest address keys (a Map keeps insertion order).
    for (const key of this.attempts.keys()) {
      if (this.attempts.size <= MAX_KEYS) break;
      if (key.startsWith("address:")) this.attempts.delete(key);
    }
  }
}
