// Failed sign-ins, counted per account and per address over a sliding minute: past the limit, a sign-in is
// refused before its password is checked (the hash check is the expensive part, and guessing needs many).
export interface LoginLimits {
  /** Failures allowed in a window, per account and per address; the next attempt is refused unchecked. */
  maxFailures: number;
  windowMs: number;
}

export const LOGIN_LIMITS: LoginLimits = { maxFailures: 5, windowMs: 60_000 };
/** Keys are forgotten once this many are tracked and their failures are older than the window. */
const SWEEP_AT = 10_000;

export class LoginLimiter {
  /** "account:<name>" / "address:<ip>" → times of recent failures, oldest first. */
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly limits: LoginLimits = LOGIN_LIMITS, private readonly now: () => number = () => Date.now()) {}

  private recent(key: string, t: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((at) => t - at < this.limits.windowMs);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }

  private keys(account: string, address: string | null): string[] {
    return [`account:${account.toLowerCase()}`, ...(address ? [`address:${address}`] : [])];
  }

  /** Milliseconds until a sign-in for this account from this address may be tried again; 0 when it may now. */
  retryAfterMs(account: string, address: string | null): number {
    const t = this.now();
    let wait = 0;
    for (const key of this.keys(account, address)) {
      const list = this.recent(key, t);
      if (list.length >= this.limits.maxFailures) wait = Math.max(wait, list[list.length - this.limits.maxFailures]! + this.limits.windowMs - t);
    }
    return wait;
  }

  fail(account: string, address: string | null): void {
    const t = this.now();
    if (this.failures.size >= SWEEP_AT) for (const key of [...this.failures.keys()]) this.recent(key, t);
    for (const key of this.keys(account, address)) this.failures.set(key, [...this.recent(key, t), t]);
  }

  /** A correct password clears the account's count (its owner is back); the address keeps its own. */
  succeed(account: string): void {
    this.failures.delete(`account:${account.toLowerCase()}`);
  }
}
