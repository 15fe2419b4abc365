// The scheduler's pure state: admission against a limit, FIFO waiting entries, and dispatch to free worker slots.

export interface QueueEntry<T> {
  id: string;
  /** Which model (pool) serves it. */
  model: string;
  payload: T;
  queuedAt: number;
  /** Set when handed to a worker. */
  batchedAt: number | null;
  /** True once the client left or the request was cancelled; such entries are dropped, never dispatched. */
  cancelled: boolean;
}

export interface SlotView {
  workerId: number;
  model: string;
  /** Sequences the worker may still take right now. */
  free: number;
}

export type Admission = { ok: true } | { ok: false; reason: "overloaded" };

export class RequestQueue<T> {
  private waiting: QueueEntry<T>[] = [];
  private active = new Map<string, QueueEntry<T> & { workerId: number }>();

  constructor(private readonly limit: number) {}

  get size(): { waiting: number; active: number } {
    return { waiting: this.waiting.length, active: this.active.size };
  }

  /** How many more entries would be admitted now. */
  room(): number {
    return Math.max(0, this.limit - this.waiting.length - this.active.size);
  }

  /** Admits an entry unless active + waiting already reached the limit. */
  admit(entry: Omit<QueueEntry<T>, "batchedAt" | "cancelled">): Admission {
    if (this.room() === 0) return { ok: false, reason: "overloaded" };
    this.waiting.push({ ...entry, batchedAt: null, cancelled: false });
    return { ok: true };
  }

  /** Marks an entry cancelled; returns the worker holding it, if it was already dispatched. */
  cancel(id: string): { workerId: number } | null {
    const running = this.active.get(id);
    if (running) {
      running.cancelled = true;
      return { workerId: running.workerId };
    }
    const i = this.waiting.findIndex((e) => e.id === id);
    if (i >= 0) this.waiting.splice(i, 1);
    return null;
  }

  /**
   * Pairs waiting entries (oldest first) with free slots of workers serving their model.
   * Cancelled entries are dropped first. Mutates the slot counts it is given.
   */
  dispatch(slots: SlotView[], now: number): { entry: QueueEntry<T>; workerId: number }[] {
    const out: { entry: QueueEntry<T>; workerId: number }[] = [];
    const keep: QueueEntry<T>[] = [];
    for (const entry of this.waiting) {
      if (entry.cancelled) continue;
      // Least-loaded worker first, so sequences spread across workers of the same model.
      const slot = slots.filter((s) => s.model === entry.model && s.free > 0).sort((a, b) => b.free - a.free)[0];
      if (!slot) {
        keep.push(entry);
        continue;
      }
      slot.free--;
      entry.batchedAt = now;
      this.active.set(entry.id, { ...entry, workerId: slot.workerId });
      out.push({ entry, workerId: slot.workerId });
    }
    this.waiting = keep;
    return out;
  }

  /** Removes a finished entry; returns it, or undefined when it was not active. */
  finish(id: string): (QueueEntry<T> & { workerId: number }) | undefined {
    const e = this.active.get(id);
    this.active.delete(id);
    return e;
  }

  /** Ids of active entries held by one worker (to fail them when it dies). */
  heldBy(workerId: number): string[] {
    return [...this.active.values()].filter((e) => e.workerId === workerId).map((e) => e.id);
  }

  /** Waiting entries of a model (to fail them when the model cannot be served at all). */
  waitingFor(model: string): string[] {
    return this.waiting.filter((e) => e.model === model).map((e) => e.id);
  }
}
