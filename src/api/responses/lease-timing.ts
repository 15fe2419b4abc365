// How long a replica's hold on the stored responses it runs lasts, and how often it is renewed and others' are checked.

/** A lease lasts this long past its last renewal: a replica silent for this long has stopped (crash, kill -9, partition). */
export const LEASE_MS = 5_000;
/** The owner renews all its leases (one UPDATE) this often: two renewals may fail before its lease runs out. */
export const RENEW_EVERY_MS = 1_500;
/** Each replica looks for expired leases this often, so a dead replica's jobs are taken over within LEASE_MS + this. */
export const CLAIM_EVERY_MS = 1_000;
/** At most this many responses are claimed per look (the rest wait for the next one). */
export const CLAIM_BATCH = 50;
