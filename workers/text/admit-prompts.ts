// Which queued prompts a step admits into its one batched prefill: in lane then arrival order, within the prefill
// token budget (padding counted), leaving long prompts to the chunked lane. Taken ones leave the queue.
import { isBackground } from "../../src/protocol/lanes.ts";
import { type BackgroundPace, laneBudget, scoresPrompt } from "./lane-choice.ts";
import type { PrefixReuse } from "./prefix-reuse.ts";
import type { Sequence } from "./sequence.ts";

export interface AdmitOptions {
  /** Rows free for newcomers. */
  free: number;
  /** Prompt tokens one step prefills (background ones fewer: lane-choice.ts), and those already spent on a chunk this step. */
  budget: number;
  spent: number;
  /** Background sequences wait this step (an interactive prompt fills, or paused rows go back first). */
  backgroundWaits: boolean;
  /** The runner's passes over a past take one row: a sequence with a cached prefix is prefilled alone. */
  oneRowPast: boolean;
  /** How background prompts are admitted (lane-choice.ts backgroundPace; absent: `one`'s budget, any number of prompts). */
  pace?: BackgroundPace;
}

/** Takes the queued prompts one prefill admits, for up to `free` rows (marked pending in the prefix cache). */
export function admitPrompts(queue: Sequence[], prefix: PrefixReuse, o: AdmitOptions): Sequence[] {
  const taken: Sequence[] = [];
  let longest = 0;
  for (let i = 0; i < queue.length && taken.length < o.free; ) {
    const seq = queue[i]!;
    // The queue is in lane order: from the first background sequence on, everything is background.
    if (isBackground(seq.lane) && (o.backgroundWaits || (o.pace === "one" && taken.some((t) => isBackground(t.lane))))) break;
    // Sequences whose media is still being preprocessed wait without holding up the ones behind them.
    // So do prompts being scored: the chunked lane takes them, one at a time.
    if (!seq.media.ready || scoresPrompt(seq)) {
      i++;
      continue;
    }
    const usable = prefix.usable(seq.prefix, seq.promptIds.length, true);
    const len = seq.promptIds.length - usable;
    const limit = laneBudget(seq, o.budget, o.pace);
    // Long ones go to the chunked lane; one whose next block a prefill under way computes waits to find it cached.
    if (len > limit || prefix.waitsForPending(seq.prefix, usable)) {
      i++;
      continue;
    }
    const wider = Math.max(longest, len);
    // A runner whose passes over a past take one row prefills a sequence with a cached prefix alone.
    const alone = o.oneRowPast && usable > 0;
    if (o.spent + wider * (taken.length + 1) > limit || (alone && taken.length > 0)) break;
    longest = wider;
    taken.push(queue.splice(i, 1)[0]!);
    prefix.markPending(seq.prefix, 1);
    if (alone) break;
  }
  return taken;
}
