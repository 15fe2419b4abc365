// Arrival coalescing for an idle worker: requests sent together reach the worker a few ms apart (the main thread
// authenticates and tokenizes them one by one). Prefilling the first alone makes the rest join a whole step later
// (~100 ms at the 0.5B shape) in a second prefill and a cache rebuild; waiting until arrivals go quiet lets the burst
// share one prefill. Same idea as a dynamic batcher's queue delay, bounded so a lone request loses at most `maxMs`.

export interface BurstWindow {
  /** Stop gathering once no request arrived for this long. */
  quietMs: number;
  /** Never gather longer than this in total. */
  maxMs: number;
  /**
   * While the server says more requests for the model are on their way (`incoming`, from the last add), the quiet
   * period and the bound stretch to these: the main thread prepares a burst's requests one by one, 4–5 ms each, so 16
   * sent together reach the worker over some 80 ms, past the plain window (a 16-client round split into two prefills).
   */
  announcedQuietMs: number;
  announcedMaxMs: number;
}

export const DEFAULT_BURST_WINDOW: BurstWindow = { quietMs: 5, maxMs: 20, announcedQuietMs: 30, announcedMaxMs: 150 };

/**
 * Waits while queued requests keep arriving, or are announced; returns the ms waited. `queued` reads the queue length,
 * `incoming` how many more requests the server last said it was preparing.
 */
export async function gatherBurst(
  queued: () => number,
  window: BurstWindow,
  clock: { now(): number; sleep(ms: number): Promise<void> } = { now: () => performance.now(), sleep: (ms) => Bun.sleep(ms) },
  incoming: () => number = () => 0,
): Promise<number> {
  const started = clock.now();
  let seen = queued();
  let lastArrival = started;
  for (;;) {
    const announced = incoming() > 0;
    const left = (announced ? window.announcedMaxMs : window.maxMs) - (clock.now() - started);
    if (left <= 0) break;
    await clock.sleep(Math.min(window.quietMs, left));
    const now = queued();
    if (now !== seen) {
      seen = now;
      lastArrival = clock.now();
    } else if (clock.now() - lastArrival >= (incoming() > 0 ? window.announcedQuietMs : window.quietMs)) break;
  }
  return clock.now() - started;
}
