// The scheduler's pure state: admission against a cost budget, FIFO waiting entries, and dispatch to free worker slots.
import { createHash } from "node:crypto";

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
  /**
   * Entries with the same key go to the worker that took the last one while it has room (each worker keeps its own
   * prefix cache: a conversation's next turn or a shared system prompt finds it there).
   */
  affinity?: string;
}

/** Opening tokens an affinity key covers: enough to tell conversations apart, shared by turns and long system prompts. */
export const AFFINITY_TOKENS = 64;

/** A sequence's affinity key: its cache scope and its opening tokens (none without a scope: it does not use the cache). */
export function affinityKey(scope: string | undefined, promptIds: readonly number[]): string | undefined {
  if (scope === undefined) return undefined;
  const head = Int32Array.from(promptIds.slice(0, AFFINITY_TOKENS));
  return `${scope}|${createHash("sha256").update(new Uint8Array(head.buffer)).digest("hex").slice(0, 32)}`;
}

/** Affinity keys remembered (least recently dispatched forgotten first). */
const AFFINITY_KEYS = 10_000;

/**
 * The slot an entry goes to: the worker its affinity key went to last, while that one has at least half the free slots
 * of the least-loaded worker (so one hot prefix cannot pile everything onto one worker); else the least-loaded one.
 */
export function pickSlot(slots: readonly SlotView[], model: string, preferred: number | undefined): SlotView | undefined {
  const open = slots.filter((s) => s.model === model && s.free > 0);
  const best = open.reduce<SlotView | undefined>((a, s) => (!a || s.free > a.free ? s : a), undefined);
  const sticky = preferred === undefined ? undefined : open.find((s) => s.workerId === preferred);
  return sticky && best && sticky.free * 2 >= best.free ? sticky : best;
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
  /** The worker each affinity key went to last. */
  private readonly affinity = new Map<string, number>();

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
      // Least-loaded worker first, so entries spread across workers of the same model, unless affinity says otherwise.
      const slot = pickSlot(slots, entry.model, entry.affinity === undefined ? undefined : this.affinity.get(entry.affinity));
      if (!slot) {
        keep.push(entry);
        continue;
      }
      if (entry.affinity !== undefined) this.remember(entry.affinity, slot.workerId);
      slot.free--;
      entry.batchedAt = now;
      this.active.set(entry.id, { ...entry, workerId: slot.workerId });
      out.push({ entry, workerId: slot.workerId });
    }
    this.waiting = keep;
    return out;
  }

  private remember(key: string, workerId: number): void {
    this.affinity.delete(key);
    this.affinity.set(key, workerId);
    if (this.affinity.size > AFFINITY_KEYS) this.affinity.delete(this.affinity.keys().next().value!);
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
