// One thread at a time on the webgpu device. ONNX Runtime's webgpu EP keeps one device context per process (one Dawn
// device, one command encoder, one set of pending dispatches and buffer caches) that every session shares, and guards
// none of it against two threads: two workers loading or running at once interleave each other's commands (Dawn's
// "compute_pipeline.has_value()", a wrong dispatch count, bad_alloc, segfaults). So a worker takes a turn in a table in
// shared memory before it touches the device, and gives it to the next waiting worker, round robin, when it is done.
//
// Layout (Int32Array): [0] the seat holding the turn, plus one (0: nobody, -1: being passed on from a seat whose worker
// ended); [1 + s] 1 while seat s waits, 2 once its worker ended.

/** What a device worker is given with its load: the process's table and its own seat in it. */
export interface DeviceSeat {
  buffer: SharedArrayBuffer;
  seat: number;
}

const HOLDER = 0;
const PASSING = -1;
const WAITS = 1;
const GONE = 2;
const waiting = (seat: number) => 1 + seat;

/** Gives the turn to the next waiting seat after `from` (round robin), or frees it; wakes the waiters. */
function handOn(table: Int32Array, from: number): void {
  const seats = table.length - 1;
  for (let i = 1; i <= seats; i++) {
    const next = (from + i) % seats;
    if (Atomics.compareExchange(table, waiting(next), WAITS, 0) !== WAITS) continue;
    Atomics.store(table, HOLDER, next + 1);
    Atomics.notify(table, HOLDER);
    // Its worker ended after it was chosen: whoever of this thread and the main thread claims the passing goes on.
    if (Atomics.load(table, waiting(next)) === GONE) passFrom(table, next);
    return;
  }
  Atomics.store(table, HOLDER, 0);
  Atomics.notify(table, HOLDER);
}

/** Passes on a turn held by `seat`, whose worker ended; one caller wins the compare-exchange, so it is passed once. */
function passFrom(table: Int32Array, seat: number): void {
  if (Atomics.compareExchange(table, HOLDER, seat + 1, PASSING) === seat + 1) handOn(table, seat);
}

/** A worker's side: `run` holds the turn for the time of `fn`; overlapping runs of one thread share one turn. */
export class DeviceTurns {
  private readonly table: Int32Array;
  private users = 0;
  private held: Promise<void> | null = null;

  constructor(private readonly seat: DeviceSeat) {
    this.table = new Int32Array(seat.buffer);
    if (seat.seat < 0 || seat.seat >= this.table.length - 1) throw new Error(`device seat ${seat.seat} is outside the table`);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // One thread's own calls never overlap inside ONNX Runtime (they run on this thread), so they may share a turn.
    if (this.users++ === 0) this.held = this.take();
    try {
      await this.held;
      return await fn();
    } finally {
      if (--this.users === 0) {
        this.held = null;
        handOn(this.table, this.seat.seat);
      }
    }
  }

  private async take(): Promise<void> {
    const me = this.seat.seat + 1;
    // Waiting is said before trying, so a holder that gives up the turn meanwhile hands it here.
    Atomics.store(this.table, waiting(this.seat.seat), WAITS);
    for (;;) {
      const holder = Atomics.compareExchange(this.table, HOLDER, 0, me);
      if (holder === 0 || holder === me) break;
      // Not blocking: the worker keeps answering its supervisor's pings while it waits.
      await Atomics.waitAsync(this.table, HOLDER, holder).value;
    }
    Atomics.store(this.table, waiting(this.seat.seat), 0);
  }
}

/** The main thread's side: hands out seats, and takes back those of workers that ended (passing on a turn they held). */
export class DeviceTurnTable {
  private readonly table: Int32Array;
  private readonly free: number[];

  constructor(seats = 256) {
    this.table = new Int32Array(new SharedArrayBuffer(4 * (1 + seats)));
    this.free = Array.from({ length: seats }, (_, i) => i);
  }

  /** A seat for a new worker; seats come back last in line, so one is reused as late as possible. */
  claim(): DeviceSeat {
    const seat = this.free.shift();
    if (seat === undefined) throw new Error(`all ${this.table.length - 1} webgpu worker seats are taken`);
    Atomics.store(this.table, waiting(seat), 0);
    return { buffer: this.table.buffer as SharedArrayBuffer, seat };
  }

  /** The seat's worker has exited: it waits for nothing, and a turn it held (or is being handed) goes to the next. */
  release(seat: DeviceSeat): void {
    Atomics.store(this.table, waiting(seat.seat), GONE);
    passFrom(this.table, seat.seat);
    this.free.push(seat.seat);
  }

  /** Runs `fn` in a turn of this thread's own (the start-up probe, beside a test process's other servers' workers). */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const seat = this.claim();
    try {
      return await new DeviceTurns(seat).run(fn);
    } finally {
      this.release(seat);
    }
  }

  /** The seat holding the turn (null: nobody), for tests and the log. */
  holder(): number | null {
    const h = Atomics.load(this.table, HOLDER);
    return h > 0 ? h - 1 : null;
  }
}

/** The process's one table: every supervisor's webgpu workers share ONNX Runtime's one device context. */
export const processDeviceTurns = new DeviceTurnTable();
