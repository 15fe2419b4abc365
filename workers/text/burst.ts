// Arrival coalescing for an idle worker: requests sent together reach the worker a few ms apart (the main thread
// authenticates and tokenizes them one by one). Prefilling the first alone makes the rest join a whole step later
// (~100 ms at the 0.5B shape) in a second prefill and a cache rebuild; waiting until arrivals go quiet lets the burst
// share one prefill. Same idea as a dynamic batcher's queue delay, bounded so a lone request loses at most `maxMs`.

export interface BurstWindow {
  /** Stop gathering once no request arrived for this long. */
  quietMs: number;
  /** Never gather longer than this in total. */
  maxMs: number;
}

export const DEFAULT_BURST_WINDOW: BurstWindow = { quietMs: 5, maxMs: 20 };

/** Waits while queued requests keep arriving; returns the ms waited. `queued` reads the queue length. */
export async function gatherBurst(
  queued: () => number,
  window: BurstWindow,
  clock: { now(): number; sleep(ms: number): Promise<void> } = { now: () => performance.now(), sleep: (ms) => Bun.sleep(ms) },
): Promise<number> {
  const started = clock.now();
  let seen = queued();
  for (;;) {
    const left = window.maxMs - (clock.now() - started);
    if (left <= 0) break;
    await clock.sleep(Math.min(window.quietMs, left));
    const now = queued();
    if (now === seen) break;
    seen = now;
  }
  return clock.now() - started;
}
