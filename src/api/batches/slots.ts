// The process's line slots: how many batch lines run at once, across every batch this replica runs, so batches keep
// the scheduler's rows busy without filling its whole queue (interactive requests still find room).

/** A quarter of the queue (KILN_MAX_QUEUE), at least 1 and at most 64 lines at once. */
export function lineSlots(maxQueue: number): number {
  return Math.max(1, Math.min(64, Math.floor(maxQueue / 4)));
}

export class Slots {
  #used = 0;
  readonly #waiters = new Set<() => void>();

  constructor(readonly size: number) {}

  free(): number {
    return this.size - this.#used;
  }

  take(): void {
    this.#used++;
  }

  give(): void {
    this.#used--;
    for (const w of [...this.#waiters]) w();
  }

  /** Calls `fn` at each slot given back until the returned function is called. */
  onFree(fn: () => void): () => void {
    this.#waiters.add(fn);
    return () => this.#waiters.delete(fn);
  }
}
