// The lanes both sides agree on: the order waiting work leaves in (priority, default, then flex and batch sharing the last lane),
// which work is background (it fills rows interactive work leaves free and yields them), and the admission share
// background work may never take (the interactive reserve). Pure: the scheduler's queue and the text engine use them alike.
import type { ServiceTier } from "../inference/service-tier.ts";

/** Dispatch order: lower goes first; flex and batch share the last lane. */
const RANK: Record<ServiceTier, number> = { priority: 0, default: 1, flex: 2, batch: 2 };

export function laneRank(lane: ServiceTier | undefined): number {
  return RANK[lane ?? "default"];
}

/** Whether work in this lane only takes rows interactive work does not need (and is preempted for it). */
export function isBackground(lane: ServiceTier | undefined): boolean {
  return laneRank(lane) === RANK.flex;
}

/** Items sorted by lane, first-come order kept within a lane (a stable sort). */
export function byLane<T>(items: readonly T[], laneOf: (item: T) => ServiceTier | undefined): T[] {
  return items
    .map((item, i) => ({ item, i, rank: laneRank(laneOf(item)) }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((x) => x.item);
}

/** Where an item of `lane` goes in a list already in lane order: after every item of its own lane or a higher one. */
export function laneInsertAt<T>(items: readonly T[], lane: ServiceTier | undefined, laneOf: (item: T) => ServiceTier | undefined): number {
  const rank = laneRank(lane);
  let at = items.length;
  while (at > 0 && laneRank(laneOf(items[at - 1]!)) > rank) at--;
  return at;
}

/** Budget units background work may hold at most: the budget less the interactive reserve (`reservePercent` of it, rounded up). */
export function backgroundBudget(budget: number, reservePercent: number): number {
  return budget - Math.ceil((budget * reservePercent) / 100);
}

/**
 * Which background rows to stop so waiting interactive work gets rows: `need` rows beyond the free ones, taken from the
 * background rows that have produced the fewest tokens (the newest work yields first). Returns their indexes.
 */
export function rowsToPreempt(rows: readonly { background: boolean; generated: number }[], free: number, need: number): number[] {
  const missing = need - free;
  if (missing <= 0) return [];
  return rows
    .map((r, i) => ({ ...r, i }))
    .filter((r) => r.background)
    .sort((a, b) => a.generated - b.generated || b.i - a.i)
    .slice(0, missing)
    .map((r) => r.i)
    .sort((a, b) => a - b);
}

/** How many paused background rows may rejoin: the free rows less those kept for interactive work still waiting. */
export function rowsToResume(paused: number, free: number, interactiveWaiting: number): number {
  return Math.max(0, Math.min(paused, free - interactiveWaiting));
}
