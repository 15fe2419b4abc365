// Sign-in attempts, counted per (typed name, address) pair and per address over a sliding minute. A pair is counted
// whether or not the name is an account's, so a known and an unknown name answer alike (no name discovery), and
// failures from one address never lock the account out for another (no lockout of the operator by a stranger). An
// attempt counts from the moment it starts, before its password is checked, so a burst of parallel guesses is limited
// like a sequence of them; a correct password takes its own attempt back. Past a limit, a sign-in is refused before any
// hash is checked. This is the in-process counter; redis-login-limiter.ts is the one replicas share.
import { createHash } from "node:crypto";
import { addressUnit } from "../../http/ip-address.ts";

export interface LoginLimits {
  /** Attempts allowed in a window for one name from one address; the next one is refused unchecked. */
  perPair: number;
  /** Attempts allowed in a window per address, whatever the names (higher: an office or a NAT shares one). */
  perAddress: number;
  windowMs: number;
}

export const LOGIN_LIMITS: LoginLimits = { perPair: 5, perAddress: 20, windowMs: 60_000 };

/** One attempt in progress: what `succeed` takes back if its password was right. */
export interface Attempt {
  keys: string[];
  /** The attempt's own mark in each count (its start time, made unique). */
  id: string;
}

export type Begun = { waitMs: number } | { attempt: Attempt };

export interface LoginLimiter {
  /**
   * Starts an attempt of the typed `name` from `address`: the milliseconds to wait when the pair or the address is at
   * its limit (nothing is counted then), or the attempt, counted at once.
   */
  begin(name: string, address: string | null): Promise<Begun>;
  /** A correct password: its attempt no longer counts, and the pair's earlier failures are forgiven. */
  succeed(a: Attempt): Promise<void>;
}

/**
 * The counts an attempt falls in, with their limits: "pair:<name digest>:<address>" and "address:<ip or /64>". The
 * typed name is kept as a digest, since a password typed in the wrong field must not be stored anywhere.
 */
export function loginKeys(name: string, address: string | null, limits: LoginLimits): [string, number][] {
  const digest = createHash("sha256").update(name.trim().toLowerCase()).digest("hex").slice(0, 32);
  const unit = address === null ? "-" : addressUnit(address);
  const keys: [string, number][] = [[`pair:${digest}:${unit}`, limits.perPair]];
  if (address !== null) keys.push([`address:${unit}`, limits.perAddress]);
  return keys;
}

/** Milliseconds until a count of attempt times (oldest first) is below `limit` again; 0 when it is now. */
export function waitFor(times: readonly number[], limit: number, windowMs: number, t: number): number {
  return times.length >= limit ? times[times.length - limit]! + windowMs - t : 0;
}

/** Expired entries are swept once the map holds this many keys; past MAX_KEYS the oldest keys are dropped. */
const SWEEP_AT = 10_000;
const MAX_KEYS = 100_000;

export class MemoryLoginLimiter implements LoginLimiter {
  /** Key → start times of recent attempts, oldest first. */
  private readonly attempts = new Map<string, number[]>();
  private lastSweep = 0;
  private seq = 0;

  constructor(private readonly limits: LoginLimits = LOGIN_LIMITS, private readonly now: () => number = () => Date.now()) {}

  private recent(key: string, t: number): number[] {
    const list = (this.attempts.get(key) ?? []).filter((at) => t - at < this.limits.windowMs);
    if (list.length) this.attempts.set(key, list);
    else this.attempts.delete(key);
    return list;
  }

  async begin(name: string, address: string | null): Promise<Begun> {
    const t = this.now();
    const keys = loginKeys(name, address, this.limits);
    let waitMs = 0;
    for (const [key, limit] of keys) waitMs = Math.max(waitMs, waitFor(this.recent(key, t), limit, this.limits.windowMs, t));
    if (waitMs > 0) return { waitMs };
    this.sweep(t);
    for (const [key] of keys) this.attempts.set(key, [...(this.attempts.get(key) ?? []), t]);
    return { attempt: { keys: keys.map(([k]) => k), id: `${t}:${++this.seq}` } };
  }

  async succeed(a: Attempt): Promise<void> {
    const at = Number(a.id.split(":")[0]);
    for (const key of a.keys) {
      if (key.startsWith("pair:")) this.attempts.delete(key);
      else {
        const list = this.attempts.get(key) ?? [];
        const i = list.indexOf(at);
        if (i >= 0) list.splice(i, 1);
        if (!list.length) this.attempts.delete(key);
      }
    }
  }

  private sweep(t: number): void {
    if (this.attempts.size < SWEEP_AT || t - this.lastSweep < 1000) return;
    this.lastSweep = t;
    for (const key of [...this.attempts.keys()]) this.recent(key, t);
    // Still too many (a flood from many addresses): forget the oldest keys (a Map keeps insertion order).
    for (const key of this.attempts.keys()) {
      if (this.attempts.size <= MAX_KEYS) break;
      this.attempts.delete(key);
    }
  }
}
