// The scheduler's pure state: admission against a cost budget (background lanes kept out of the interactive reserve),
// waiting entries in lane order (FIFO within a lane), and dispatch to free worker slots.
import { createHash } from "node:crypto";
import type { ServiceTier } from "../inference/service-tier.ts";
import { backgroundBudget, byLane, isBackground } from "../protocol/lanes.ts";

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
  /** Its lane (absent: default): the order it leaves in, and whether it only takes rows interactive work leaves. */
  lane?: ServiceTier;
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
export function pickSlot(slots: readonly SlotView[], model: string, preferred: number | undefined, room: (s: SlotView) => number = (s) => s.free): SlotView | undefined {
  const open = slots.filter((s) => s.model === model && room(s) > 0);
  const best = open.reduce<SlotView | undefined>((a, s) => (!a || room(s) > room(a) ? s : a), undefined);
  const sticky = preferred === undefined ? undefined : open.find((s) => s.workerId === preferred);
  return sticky && best && room(sticky) * 2 >= room(best) ? sticky : best;
}

/** Rows of a slot background work may take: its spare rows where the backend counts them apart, else its free ones. */
export const spareRoom = (s: SlotView) => s.spare ?? s.free;

export type NewEntry<T> = Omit<QueueEntry<T>, "batchedAt">;

export interface SlotView {
  workerId: number;
  model: string;
  /** Entries the worker may still take right now (interactive ones, where the backend counts lanes: see `spare`). */
  free: number;
  /**
   * Rows no entry holds, which background entries may take (a text worker takes interactive entries beyond them and
   * preempts background rows for them); absent: background entries take `free` like the rest.
   */
  spare?: number;
}

export type Admission = { ok: true } | { ok: false; reason: "overloaded" };

export class RequestQueue<T> {
  private waiting: QueueEntry<T>[] = [];
  private active = new Map<string, QueueEntry<T> & { workerId: number }>();
  /** Cost of every waiting and active entry. */
  private used = 0;
  /** The part of `used` background entries hold. */
  private background = 0;
  /** The worker each affinity key went to last. */
  private readonly affinity = new Map<string, number>();

  /** `reservePercent`: the share of the budget background entries may never hold (kept for interactive requests). */
  constructor(private readonly budget: number, private readonly reservePercent = 0) {}

  get size(): { waiting: number; active: number } {
    return { waiting: this.waiting.length, active: this.active.size };
  }

  /** Budget units still free. */
  room(): number {
    return Math.max(0, this.budget - this.used);
  }

  /**
   * Admits a group (the choices of one request) all together, or none of it when its total cost does not fit; a
   * background group must also fit beside the other background entries within the budget less the reserve.
   */
  admit(group: NewEntry<T>[]): Admission {
    const cost = group.reduce((sum, e) => sum + e.cost, 0);
    const bg = group.filter((e) => isBackground(e.lane)).reduce((sum, e) => sum + e.cost, 0);
    if (cost > this.room() || (bg > 0 && this.background + bg > backgroundBudget(this.budget, this.reservePercent))) return { ok: false, reason: "overloaded" };
    this.used += cost;
    this.background += bg;
    for (const e of group) this.waiting.push({ ...e, batchedAt: null });
    return { ok: true };
  }

  /** A waiting entry leaves at once; a dispatched one stays until `finish` and its worker is returned, to be told. */
  cancel(id: string): { workerId: number } | null {
    const running = this.active.get(id);
    if (running) return { workerId: running.workerId };
    const i = this.waiting.findIndex((e) => e.id === id);
    if (i >= 0) this.release(this.waiting.splice(i, 1)[0]!);
    return null;
  }

  /**
   * Pairs waiting entries (lane by lane, oldest first within one) with free slots of workers serving their model:
   * interactive entries with `free`, background ones with spare rows only. Mutates the slot counts it is given.
   */
  dispatch(slots: SlotView[], now: number): { entry: QueueEntry<T>; workerId: number }[] {
    const out: { entry: QueueEntry<T>; workerId: number }[] = [];
    const keep: QueueEntry<T>[] = [];
    for (const entry of byLane(this.waiting, (e) => e.lane)) {
      const background = isBackground(entry.lane);
      // Least-loaded worker first, so entries spread across workers of the same model, unless affinity says otherwise.
      const slot = pickSlot(slots, entry.model, entry.affinity === undefined ? undefined : this.affinity.get(entry.affinity), background ? spareRoom : undefined);
      if (!slot) {
        keep.push(entry);
        continue;
      }
      if (entry.affinity !== undefined) this.remember(entry.affinity, slot.workerId);
      // A background entry takes a spare row only; an interactive one a free row, and a spare one while any is left.
      if (!background || slot.spare === undefined) slot.free--;
      if (slot.spare !== undefined) slot.spare = Math.max(0, slot.spare - 1);
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
    this.release(e);
    return e;
  }

  private release(e: QueueEntry<T>): void {
    this.used -= e.cost;
    if (isBackground(e.lane)) this.background -= e.cost;
  }

  /** How many entries wait for each model (models with none are absent). */
  waitingByModel(): Map<string, number> {
    const out = new Map<string, number>();
    for (const e of this.waiting) out.set(e.model, (out.get(e.model) ?? 0) + 1);
    return out;
  }

  /** How many entries wait for each model in each lane (pairs with none are absent; an entry without a lane is default's). */
  waitingByLane(): { model: string; tier: ServiceTier; depth: number }[] {
    const out = new Map<string, { model: string; tier: ServiceTier; depth: number }>();
    for (const e of this.waiting) {
      const tier = e.lane ?? "default";
      const key = `${e.model}\u0000${tier}`;
      const row = out.get(key) ?? out.set(key, { model: e.model, tier, depth: 0 }).get(key)!;
      row.depth++;
    }
    return [...out.values()];
  }

  /** Waiting entries of a model (to fail them when no worker is left that could serve it). */
  waitingFor(model: string): string[] {
    return this.waiting.filter((e) => e.model === model).map((e) => e.id);
  }
}
