// How long a replica's hold on the stored responses it runs lasts, and how often it is renewed and others' are checked:
// all from the lease (KILN_LEASE_MS, 5 s by default).

/** At most this many responses are claimed per look (the rest wait for the next one). */
export const CLAIM_BATCH = 50;

export interface LeaseTiming {
  /** A replica silent for this long has stopped (crash, kill -9, partition, a long pause). */
  leaseMs: number;
  /** The owner renews all its leases (one UPDATE) this often: two renewals may fail before its lease runs out. */
  renewEveryMs: number;
  /** Each replica looks for expired leases this often, so a dead replica's jobs are taken over within leaseMs + this. */
  claimEveryMs: number;
}

/** Pure: 5 s gives renewals every 1.5 s and looks every second. */
export function leaseTiming(leaseMs: number): LeaseTiming {
  return { leaseMs, renewEveryMs: Math.round(leaseMs * 0.3), claimEveryMs: Math.round(leaseMs / 5) };
}
