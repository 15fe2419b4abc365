// The service tiers a generation runs under: what a client may ask for (`service_tier`), and the lane each resolves to.
// A lane decides where the request waits in the scheduler, which of the team's rate-limit buckets it counts against,
// and the price factor it is billed at. Batch lines run in the batch lane, which a client cannot ask for directly.

/** What a request may name in `service_tier` (the compatible formats' values). */
export const REQUESTED_TIERS = ["auto", "default", "flex", "priority"] as const;
export type RequestedTier = (typeof REQUESTED_TIERS)[number];

/** The lane a request runs in once its tier is resolved. */
export type ServiceTier = "default" | "flex" | "priority" | "batch";
