// Stored-response writes coalesced per macrotask: the events and row updates every recorder produces while one
// generation step is delivered go to SQLite in one transaction, not one per token, and only then to live listeners,
// so an event is still published in the same synchronous step as it is stored (follow.ts relies on that).
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../log/logger.ts";

export interface QueuedWrite {
  /** The database write (it throws as the repo does). */
  write(): void;
  /** The write failed on its own (after its batch failed): its owner decides what that means. */
  failed(e: unknown): void;
  /** Runs once the write was tried, whatever its outcome: publishing to live listeners. */
  after?(): void;
}

export class WriteQueue {
  private pending: QueuedWrite[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  push(w: QueuedWrite): void {
    this.pending.push(w);
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the current macrotask and its microtasks: one worker step's events, all responses.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Writes everything queued, in order, then runs each `after`; never throws. */
  flush(): void {
    const batch = this.pending;
    if (!batch.length) return;
    this.pending = [];
    try {
      this.db.$client.transaction(() => {
        for (const w of batch) w.write();
      })();
    } catch {
      // The batch rolled back (a response deleted while it ran, a busy or full disk): each write alone, so one
      // failure costs only its own write.
      for (const w of batch) this.guard(() => this.alone(w));
    }
    for (const w of batch) if (w.after) this.guard(w.after);
  }

  private alone(w: QueuedWrite): void {
    try {
      w.write();
    } catch (e) {
      w.failed(e);
    }
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.logger.error("stored response write or publish failed", { error: String(e) });
    }
  }
}

const queues = new WeakMap<Db, WriteQueue>();

/** The one write queue of a database (every recorder of an app shares it, so a step is one transaction). */
export function writeQueueOf(db: Db, logger: Logger): WriteQueue {
  let q = queues.get(db);
  if (!q) queues.set(db, (q = new WriteQueue(db, logger)));
  return q;
}
