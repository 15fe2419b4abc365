// The engine's pacing of background prompts over time (the choice itself is lane-choice.ts backgroundPace): when it last
// held interactive work, waiting out the grace after it when nothing else runs, and letting in requests that arrived
// during a decode pass before a background prefill would start.
import { type BackgroundPace, backgroundPace, INTERACTIVE_GRACE_MS } from "./lane-choice.ts";

export interface EngineClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: EngineClock = { now: () => performance.now(), sleep: (ms) => Bun.sleep(ms) };

export class LanePace {
  /** When a step last began with interactive work in the engine. */
  private seenAt = -Infinity;

  /** `takeArrivals`: lets messages that arrived during a pass reach the engine (absent: arrivals are not checked mid-step). */
  constructor(
    private readonly clock: EngineClock,
    private readonly takeArrivals?: () => Promise<void>,
  ) {}

  /**
   * This step's pace. `live`: interactive work is in the engine. `idle`: nothing else runs, so a step that holds
   * background prompts waits out the grace (on the clock) instead of the loop spinning through empty steps.
   */
  async pace(live: boolean, idle: boolean): Promise<BackgroundPace> {
    const now = this.clock.now();
    if (live) this.seenAt = now;
    const pace = backgroundPace(live, now - this.seenAt);
    if (pace !== "hold" || !idle) return pace;
    await this.clock.sleep(Math.max(1, INTERACTIVE_GRACE_MS - (now - this.seenAt)));
    return "full";
  }

  /**
   * After a decode pass that ran background rows: lets requests that arrived during it in, and says whether interactive
   * work now waits (`waiting` counts it), in which case the step's background prefill would only hold it up.
   */
  async arrived(decodedBackground: boolean, waiting: () => number): Promise<boolean> {
    if (!this.takeArrivals || !decodedBackground) return false;
    await this.takeArrivals();
    return waiting() > 0;
  }
}
