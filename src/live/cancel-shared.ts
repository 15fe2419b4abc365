// Cancelling a background response that is not running in this process, when replicas share a bus: the cancel goes to
// whichever replica runs it, and the answer waits for the stored response to end as a local cancel waits for its job.
// Nobody taking the cancel for ORPHAN_MS means nobody runs it (its replica died, or stopped and left it for recovery):
// it is ended here, as a local cancel ends a row whose run is gone.
import { type ResponseRow, TERMINAL } from "../db/responses-repo.ts";
import { TERMINAL_EVENTS } from "./live.ts";
import type { LiveBus } from "./live-bus.ts";

/**
 * How long a cancel must go unheard before the response counts as run by no replica: longer than a replica's subscriber
 * takes to come back after Redis did (its reconnect back-off is at most a second, see redis/subscriber.ts).
 */
export const ORPHAN_MS = 2000;
/** How often the stored row is looked at, and the cancel sent again until a replica hears it. */
const LOOK_EVERY_MS = 100;

/**
 * Resolves with the row once it has ended, or as it stands after `waitMs` (the job's replica heard the cancel but has
 * not stopped it yet: it ends cancelled once its run stops). Rejects with 503 backend_unavailable while the cancel
 * cannot be sent; with 404 when the response was deleted meanwhile (`stored` throws it).
 */
export async function cancelElsewhere(
  bus: LiveBus, row: ResponseRow, waitMs: number, stored: () => Promise<ResponseRow>, endCancelled: (row: ResponseRow) => Promise<void>,
): Promise<ResponseRow> {
  let wake: (() => void) | null = null;
  const look = () => wake?.();
  // Heard as soon as the job's replica stores its end; the row is looked at on a timer too, since a message may be lost.
  const unsubscribe = bus.subscribe(row.id, { event: (ev) => TERMINAL_EVENTS.has(ev.type) && look(), end: look, ready: () => undefined });
  try {
    const t0 = performance.now();
    let heard = false;
    for (;;) {
      if (!heard) heard = (await bus.cancel(row.id)) > 0;
      const now = await stored();
      if (TERMINAL.has(now.status)) return now;
      const waited = performance.now() - t0;
      if (!heard && waited >= ORPHAN_MS) {
        await endCancelled(now);
        return await stored();
      }
      if (waited >= waitMs) return now;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LOOK_EVERY_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    unsubscribe();
  }
}
