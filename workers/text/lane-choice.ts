// The engine's lane choices at a step boundary, over its queue and running rows: whether an interactive prompt is
// prefilled this step, how many interactive sequences wait for a row, and which background rows leave the batch.
import { isBackground, rowsToPreempt } from "../../src/protocol/lanes.ts";
import type { PrefixReuse } from "./prefix-reuse.ts";
import type { Sequence } from "./sequence.ts";

/** Whether the sequence asked for its prompt's log probabilities (prefilled alone, every position's logits kept). */
export const scoresPrompt = (s: Sequence) => s.params.promptLogprobs !== undefined;

/**
 * Prompt tokens a step prefills for the sequence: the step's budget; for background work a quarter of it (at least 32),
 * or half when no interactive work is near (`pace` full). A step an interactive request arrives during is one it waits
 * for, so background passes stay short; when the box is only running background work, fewer and larger passes spread
 * each pass's fixed cost (reading every weight once) over more prompts.
 */
export function laneBudget(s: Sequence, budget: number, pace: BackgroundPace = "one"): number {
  if (!isBackground(s.lane)) return budget;
  return Math.max(32, Math.floor(budget / (pace === "full" ? 2 : 4)));
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

/**
 * Whether a finished sequence's whole KV (prompt and answer) is kept in the prefix cache for a next turn. A batch line
 * has none (its answer goes to a file and is never continued), so its KV would only push other requests' prefixes out
 * of the cache; its prompt's blocks are still stored when it is prefilled (lines sharing a system prompt use them).
 */
export function keepsFinishedKv(lane: Sequence["lane"]): boolean {
  return lane !== "batch";
}

/** Whether interactive work is in the engine: queued, running, or in the chunked lane. */
export function interactiveLive(queue: readonly Sequence[], running: readonly Sequence[], chunked: Sequence | null): boolean {
  const interactive = (s: Sequence) => !isBackground(s.lane);
  return queue.some(interactive) || running.some(interactive) || (chunked !== null && interactive(chunked));
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

/**
 * After an interactive sequence ends, new background prompts wait this long: a conversation's next request (or a
 * client's next round) usually follows at once, and a background prefill pass started meanwhile would hold up its
 * first token for the whole pass.
 */
export const INTERACTIVE_GRACE_MS = 250;

/**
 * How background prompts are admitted this step: `hold` (none: within the grace after interactive work ended), `one`
 * (one prompt a pass, so a pass an interactive request may arrive during stays short, while interactive work is live),
 * or `full` (the background prefill budget, when no interactive work is near).
 */
export type BackgroundPace = "hold" | "one" | "full";

export function backgroundPace(interactiveLive: boolean, sinceInteractiveEndMs: number): BackgroundPace {
  if (interactiveLive) return "one";
  return sinceInteractiveEndMs < INTERACTIVE_GRACE_MS ? "hold" : "full";
}
