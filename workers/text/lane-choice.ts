// The engine's lane choices at a step boundary, over its queue and running rows: whether an interactive prompt is
// prefilled this step, how many interactive sequences wait for a row, and which background rows leave the batch.
import { isBackground, rowsToPreempt } from "../../src/protocol/lanes.ts";
import type { PrefixReuse } from "./prefix-reuse.ts";
import type { Sequence } from "./sequence.ts";

/** Whether the sequence asked for its prompt's log probabilities (prefilled alone, every position's logits kept). */
export const scoresPrompt = (s: Sequence) => s.params.promptLogprobs !== undefined;

/**
 * Prompt tokens a step prefills for the sequence: the step's budget, a quarter of it (at least 32) for background
 * work, so that a step an interactive request arrives during is short (it waits for that step to end).
 */
export function laneBudget(s: Sequence, budget: number): number {
  return isBackground(s.lane) ? Math.max(32, Math.floor(budget / 4)) : budget;
}

/**
 * Whether an interactive prompt is prefilled this step beside background work: the chunked one (`chunked`), or a
 * queued one that fits one prefill (its next block not being computed elsewhere) or can start the chunked lane while it
 * is free. Without background work anywhere the question does not arise (and costs no prefix lookups).
 */
export function interactiveFills(queue: readonly Sequence[], running: readonly Sequence[], chunked: Sequence | null, prefix: PrefixReuse, budget: number): boolean {
  const background = (s: Sequence) => isBackground(s.lane);
  if (!running.some(background) && !queue.some(background) && !(chunked && background(chunked))) return false;
  if (chunked && !background(chunked)) return true;
  return queue.some((s) => {
    if (isBackground(s.lane) || !s.media.ready) return false;
    if (scoresPrompt(s)) return !chunked;
    const usable = prefix.usable(s.prefix, s.promptIds.length);
    return s.promptIds.length - usable > budget ? !chunked : !prefix.waitsForPending(s.prefix, usable);
  });
}

/** Queued interactive sequences ready to take a row. */
export function interactiveWaiting(queue: readonly Sequence[]): number {
  return queue.filter((s) => !isBackground(s.lane) && s.media.ready).length;
}

/**
 * The running rows that leave the batch before its decode pass: every background row while an interactive prompt is
 * prefilled (they sit the step out, so it takes no longer than without them), else as many as the waiting interactive
 * sequences need beyond the `free` rows (preempted).
 */
export function rowsToYield(running: readonly Sequence[], filling: boolean, free: number, waiting: number): number[] {
  const rows = running.map((s) => ({ background: isBackground(s.lane), generated: s.generated }));
  return filling ? rows.flatMap((r, i) => (r.background ? [i] : [])) : rowsToPreempt(rows, free, waiting);
}
