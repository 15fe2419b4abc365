// A long synchronous build gives the event loop a turn between tensors, so timers and signal handlers run meanwhile.

/**
 * Resolves on the event loop's next turn, through a timer rather than setImmediate: in some process states Bun's loop
 * sleeps in its poll until the next timer is due with an immediate pending (seen in the test process after in-process
 * media models were loaded: each immediate of an import took 100–900 ms, and a 60 ms import took 10 s). A 0 ms timer
 * sets the poll's timeout itself, so the turn comes at once.
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 0));
