// The rate-limit headers OpenAI's API sends (x-ratelimit-limit-requests … -reset-tokens) and the retry headers of a 429.
import type { BucketState } from "./limiter.ts";

/** A duration as OpenAI writes its reset headers: "17ms", "1s", "8.64s", "6m0s", "1h2m3s". */
export function formatReset(ms: number): string {
  let total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  // Longer ones to the hundredth of a second, rounded up so a client waiting the reset is never early.
  total = Math.ceil(total / 10) * 10;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1000;
  const secs = `${Number(s.toFixed(2))}s`;
  if (h) return `${h}h${m}m${secs}`;
  if (m) return `${m}m${secs}`;
  return secs;
}

export interface LimitSnapshot {
  requests?: BucketState;
  tokens?: BucketState;
}

/** The six headers, for whichever of the two limits the team has (a limit it does not have has no header). */
export function rateLimitHeaders(s: LimitSnapshot): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [kind, st] of [["requests", s.requests], ["tokens", s.tokens]] as const) {
    if (!st) continue;
    out[`x-ratelimit-limit-${kind}`] = String(st.limit);
    out[`x-ratelimit-remaining-${kind}`] = String(st.remaining);
    out[`x-ratelimit-reset-${kind}`] = formatReset(st.resetMs);
  }
  return out;
}

/** Retry-After in whole seconds (rounded up) and retry-after-ms, both the true wait: the official clients read either. */
export function retryHeaders(waitMs: number): Record<string, string> {
  const ms = Math.max(1, Math.ceil(waitMs));
  return { "retry-after": String(Math.ceil(ms / 1000)), "retry-after-ms": String(ms) };
}
