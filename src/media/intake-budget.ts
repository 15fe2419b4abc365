// The server's budget of media bytes in flight in intake (KILN_INTAKE_BUDGET_BYTES): a request reserves an item's
// size before reading or decoding it, and gives it back once the decoder has taken the bytes. Past the budget a
// request waits its turn (first come, first served) for at most KILN_INTAKE_WAIT_MS, then gets 503
// service_overloaded with Retry-After, its bytes never read.
import { ApiError } from "../errors/api-error.ts";

/** Bytes held for one item: release gives them back (once), shrink gives back what the item turned out not to need. */
export interface Reservation {
  readonly bytes: number;
  shrink(to: number): void;
  release(): void;
}

interface Waiter {
  bytes: number;
  grant(): void;
}

export class IntakeBudget {
  private held = 0;
  private readonly waiting: Waiter[] = [];

  /** `capacity` bytes in flight at most (an item larger than all of it is read alone); `maxWaitMs` a request may wait. */
  constructor(readonly capacity: number, readonly maxWaitMs: number) {}

  /** Bytes reserved now, and requests waiting. */
  stats(): { held: number; waiting: number } {
    return { held: this.held, waiting: this.waiting.length };
  }

  /**
   * Reserves `bytes`, waiting behind earlier requests while the budget is spent; rejects with 503 after `maxWaitMs`,
   * or with the signal's reason when the client leaves first.
   */
  take(bytes: number, signal?: AbortSignal): Promise<Reservation> {
    signal?.throwIfAborted();
    if (!this.waiting.length && this.fits(bytes)) return Promise.resolve(this.reserve(bytes));
    return new Promise<Reservation>((resolve, reject) => {
      const leave = (e: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        // The one leaving may have blocked smaller requests behind it.
        this.admit();
        reject(e);
      };
      const onAbort = () => leave(signal!.reason);
      const timer = setTimeout(() => leave(busy(this.maxWaitMs)), this.maxWaitMs);
      const waiter: Waiter = {
        bytes,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(this.reserve(bytes));
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Whether `bytes` may be reserved now: within the budget, or alone when larger than all of it. */
  private fits(bytes: number): boolean {
    return this.held + bytes <= this.capacity || this.held === 0;
  }

  private reserve(bytes: number): Reservation {
    this.held += bytes;
    let left = bytes;
    const giveBack = (n: number) => {
      this.held -= n;
      left -= n;
      this.admit();
    };
    return {
      bytes,
      shrink: (to) => {
        if (to < left) giveBack(left - to);
      },
      release: () => {
        if (left > 0) giveBack(left);
      },
    };
  }

  /** Grants waiting requests in order while the first of them fits. */
  private admit(): void {
    while (this.waiting.length && this.fits(this.waiting[0]!.bytes)) this.waiting.shift()!.grant();
  }
}

/** The 503 of a request that waited its whole turn for intake bytes. */
function busy(waitedMs: number): ApiError {
  return ApiError.overloaded(
    `The server is reading as many input media as its intake budget (KILN_INTAKE_BUDGET_BYTES) holds, and this request waited ${Math.round(waitedMs / 100) / 10} s; retry shortly`,
  );
}
