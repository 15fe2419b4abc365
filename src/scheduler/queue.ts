// The scheduler's pure state: admission against a cost budget, FIFO waiting entries, and dispatch to free worker slots.

export interface QueueEntry<T> {
  id: string;
  /** Which model (pool) serves it. */
  model: string;
  /** Budget units it holds from admission to finish, set by its kind (a text sequence costs 1). */
  cost: number;
  payload: T;
  queuedAt: number;
  /** Set when handed to a worker. */
  batchedAt: number | null;
}

export type NewEntry<T> = Omit<QueueEntry<T>, "batchedAt">;

export interface SlotView {
  workerId: number;
  model: string;
  /** Entries the worker may still take right now. */
  free: number;
}

export type Admission = { ok: true } | { ok: false; reason: "overloaded" };

export class RequestQueue<T> {
  private waiting: QueueEntry<T>[] = [];
  private active = new Map<string, QueueEntry<T> & { workerId: number }>();
  /** Cost of every waiting and active entry. */
  private used = 0;

  constructor(private readonly budget: number) {}

  get size(): { waiting: number; active: number } {
    return { waiting: this.waiting.length, active: this.active.size };
  }

  /** Budget units still free. */
  room(): number {
    return Math.max(0, this.budget - this.used);
  }

  /** Admits a group (the choices of one request) all together, or none of it when its total cost does not fit. */
  admit(group: NewEntry<T>[]): Admission {
    const cost = group.reduce((sum, e) => sum + e.cost, 0);
    if (cost > this.room()) return { ok: false, reason: "overloaded" };
    this.used += cost;
    for (const e of group) this.waiting.push({ ...e, batchedAt: null });
    return { ok: true };
  }

  /** A waiting entry leaves at once; a dispatched one stays until `finish` and its worker is returned, to be told. */
  cancel(id: string): { workerId: number } | null {
    const running = this.active.get(id);
    if (running) return { workerId: running.workerId };
    const i = this.waiting.findIndex((e) => e.id === id);
    if (i >= 0) this.used -= this.waiting.splice(i, 1)[0]!.cost;
    return null;
  }

  /** Pairs waiting entries (oldest first) with free slots of workers serving their model. Mutates the slot counts it is given. */
  dispatch(slots: SlotView[], now: number): { entry: QueueEntry<T>; workerId: number }[] {
    const out: { entry: QueueEntry<T>; workerId: number }[] = [];
    const keep: QueueEntry<T>[] = [];
    for (const entry of this.waiting) {
      // Least-loaded worker first, so entries spread across workers of the same model.
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

  /** Removes a finished entry and frees its cost; returns it, or undefined when it was not active. */
  finish(id: string): (QueueEntry<T> & { workerId: number }) | undefined {
    const e = this.active.get(id);
    if (!e) return undefined;
    this.active.delete(id);
    this.used -= e.cost;
    return e;
  }

  /** How many entries wait for each model (models with none are absent). */
  waitingByModel(): Map<string, number> {
    const out = new Map<string, number>();
    for (const e of this.waiting) out.set(e.model, (out.get(e.model) ?? 0) + 1);
    return out;
  }

  /** Waiting entries of a model (to fail them when no worker is left that could serve it). */
  waitingFor(model: string): string[] {
    return this.waiting.filter((e) => e.model === model).map((e) => e.id);
  }
}
