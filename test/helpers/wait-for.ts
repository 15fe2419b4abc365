// Waits on a condition instead of sleeping a fixed time: polls it until it holds and fails at a deadline naming it.

export interface WaitOptions<T> {
  /** What is waited for, as the failure will say it ("4 usage rows of team 7"). */
  what: string;
  /** When the probed value is the one waited for; truthy by default. */
  until?: (value: T) => boolean;
  /** Generous: a loaded 2-core box may be slow, and a wait that passes returns as soon as the condition holds. */
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `probe` until its value passes `until` and returns that value; past the deadline, throws naming `what`
 * and the last value seen. An error thrown by the probe ends the wait at once.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, opts: WaitOptions<T>): Promise<T> {
  const { what, until = Boolean, timeoutMs = 20_000, intervalMs = 10 } = opts;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (until(value)) return value;
    if (performance.now() >= deadline) throw new Error(`waited ${timeoutMs} ms for ${what}; last saw ${shown(value)}`);
    await Bun.sleep(intervalMs);
  }
}

function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // Circular or bigint: the plain string form still names it.
    text = String(value);
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
