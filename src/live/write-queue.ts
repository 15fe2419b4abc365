// Stored-response writes coalesced per macrotask: the events and row updates every recorder produces while one
// generation step is delivered go to the database in one transaction, not one per token, and only then to live
// listeners, so an event is published only once it is stored (follow.ts relies on that). Batches are written one
// after another, in the order they were queued; a database that cannot be reached for a while (restarting, a cut
// connection) is waited for, so a job's events and its end are stored late rather than lost.
import type { Db } from "../db/client.ts";
import { type StreamWrite, writeStream } from "../db/response-events-repo.ts";
import { databaseUnreachable } from "../db/unreachable.ts";
import type { Logger } from "../log/logger.ts";

/** How long a batch is sent again while the database cannot be reached, before its writes are tried one by one. */
export const UNREACHABLE_WAIT_MS = 30_000;
/** The waits between those tries: short at first (a cut connection), then a second at most. */
const RETRY_MS = [50, 100, 200, 500, 1000];

export interface QueuedWrite {
  /** The database write, decided when it is written (null: nothing to write any more). */
  write(): StreamWrite | null;
  /** The write failed on its own (after its batch failed): its owner decides what that means. */
  failed(e: unknown): Promise<void> | void;
  /** Runs once the write was tried, whatever its outcome: publishing to live listeners. */
  after?(): void;
}

export class WriteQueue {
  private pending: QueuedWrite[] = [];
  private scheduled = false;
  /** The batch being written, and those queued behind it: settles once all are written. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  push(w: QueuedWrite): void {
    this.pending.push(w);
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the current macrotask and its microtasks: one worker step's events, all responses.
    setImmediate(async () => {
      this.scheduled = false;
      void await this.flush();
    });
  }

  /** Writes everything queued so far, after the batches before it, then runs each `after`; never rejects. */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length) this.writing = this.writing.then(() => this.write(batch)).catch((e: unknown) => this.logError(e));
    return this.writing;
  }

  private async write(batch: QueuedWrite[]): Promise<void> {
    try {
      await this.untilReachable(batch.map((w) => w.write()).filter((w) => w !== null));
    } catch {
      // The batch rolled back (a response deleted while it ran, a busy or full disk): each write alone, so one
      // failure costs only its own write.
      for (const w of batch) await this.alone(w);
    }
    // Published together, in one synchronous step, once everything before them is stored.
    for (const w of batch) {
      try {
        w.after?.();
      } catch (e) {
        this.logError(e);
      }
    }
  }

  /** Writes the batch, sending it again while the database cannot be reached, for up to UNREACHABLE_WAIT_MS. */
  private async untilReachable(writes: StreamWrite[]): Promise<void> {
    const t0 = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await writeStream(this.db, writes);
      } catch (e) {
        if (!databaseUnreachable(e) || performance.now() - t0 >= UNREACHABLE_WAIT_MS) throw e;
        if (attempt === 0) this.logger.warn("stored response writes wait for the database", { error: String(e) });
        await Bun.sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!);
      }
    }
  }

  private async alone(w: QueuedWrite): Promise<void> {
    try {
      const write = w.write();
      if (!write) return;
      try {
        await writeStream(this.db, [write]);
      } catch (e) {
        await w.failed(e);
      }
    } catch (e) {
      this.logError(e);
    }
  }

  private logError(e: unknown): void {
    this.logger.error("stored response write or publish failed", { error: String(e) });
  }
}

const queues = new WeakMap<Db, WriteQueue>();

/** The one write queue of a database (every recorder of an app shares it, so a step is one transaction). */
export function writeQueueOf(db: Db, logger: Logger): WriteQueue {
  let q = queues.get(db);
  if (!q) queues.set(db, (q = new WriteQueue(db, logger)));
  return q;
}
