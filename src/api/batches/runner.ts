// The batches this replica runs, one per process and AppDeps (batchRunner): a new batch runs where it was created; at
// start the unfinished ones are taken (a lone SQLite kiln: all of them, whatever the dead process left; on Postgres:
// those whose lease ran out), their running lines put back to pending (done lines are never run again), and run on.
// On Postgres the runner renews its batches' leases and takes over a dead replica's, with the stored responses' timing
// (src/live/lease-timing.ts). A drain stops new lines; `settled` waits for the running ones, `handOver` lets the other
// replicas take what is left at once.
import type { AppDeps } from "../../app-deps.ts";
import { claimBatches, releaseBatchLeases, renewBatchLeases } from "../../db/batch-leases-repo.ts";
import { type BatchRow, releaseLines } from "../../db/batches-repo.ts";
import { lostLeases } from "../../db/response-leases-repo.ts";
import { CLAIM_BATCH, leaseTiming } from "../../live/lease-timing.ts";
import { BatchRun } from "./run-batch.ts";
import { lineSlots, Slots } from "./slots.ts";

export class BatchRunner {
  readonly #runs = new Map<string, BatchRun>();
  readonly #slots: Slots;
  #renewing: ReturnType<typeof setInterval> | null = null;
  #claiming: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: AppDeps) {
    this.#slots = new Slots(lineSlots(deps.config.maxQueue));
  }

  get owner(): string {
    return this.deps.live.replica;
  }

  /** Runs a batch this replica holds (just created, or claimed), unless it runs here already or the server drains. */
  adopt(row: BatchRow): void {
    if (this.#runs.has(row.id) || this.deps.shutdown.draining) return;
    const run = new BatchRun(this.deps, row, this.#slots, this.owner);
    this.#runs.set(row.id, run);
    void run.done.finally(() => {
      if (this.#runs.get(row.id) === run) this.#runs.delete(row.id);
    });
  }

  /** A cancel through this replica: the batch's run looks at its row now rather than at its next look. */
  wake(id: string): void {
    this.#runs.get(id)?.wake();
  }

  /** Takes unfinished batches (see the top) and runs them; on Postgres, keeps renewing and taking over. */
  async start(): Promise<number> {
    const { leaseMs, renewEveryMs, claimEveryMs } = leaseTiming(this.deps.config.leaseMs);
    const lone = this.deps.db.dialect === "sqlite";
    const taken = await this.#takeOver(leaseMs, lone);
    if (!lone) {
      this.#renewing = this.#every(renewEveryMs, () => this.#renew(leaseMs), "batch leases not renewed");
      this.#claiming = this.#every(claimEveryMs, () => this.#takeOver(leaseMs, false), "batch leases not checked");
    }
    return taken;
  }

  async #takeOver(leaseMs: number, all: boolean): Promise<number> {
    if (this.deps.shutdown.draining) return 0;
    // A batch claimed in this pass is not claimed again in it, even when its run has already ended here.
    const seen: string[] = [];
    for (let rows = await this.#claim(leaseMs, all, seen); rows.length; rows = all ? await this.#claim(leaseMs, all, seen) : []) {
      for (const row of rows) {
        seen.push(row.id);
        // Lines the dead runner had started run again, under the same request ids (charged at most once).
        const back = await releaseLines(this.deps.db, row.id);
        this.deps.logger.info("batch taken over", { batch_id: row.id, status: row.status, lines_put_back: back });
        this.adopt(row);
      }
    }
    return seen.length;
  }

  #claim(leaseMs: number, all: boolean, seen: readonly string[]): Promise<BatchRow[]> {
    return claimBatches(this.deps.db, this.owner, { leaseMs, limit: CLAIM_BATCH, running: [...this.#runs.keys(), ...seen], all });
  }

  async #renew(leaseMs: number): Promise<void> {
    const held = [...this.#runs].map(([id, run]) => ({ id, epoch: run.epoch }));
    const kept = await renewBatchLeases(this.deps.db, this.owner, { ids: held.map((h) => h.id), leaseMs });
    for (const lost of lostLeases(held, kept)) {
      this.deps.logger.warn("batch taken over by another replica; its run here stops", { batch_id: lost.id });
      this.#runs.get(lost.id)?.lose();
    }
  }

  #every(ms: number, fn: () => Promise<unknown>, failure: string): ReturnType<typeof setInterval> {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      fn()
        .catch((e) => this.deps.logger.error(failure, { error: String(e) }))
        .finally(() => (busy = false));
    }, ms);
    timer.unref();
    return timer;
  }

  /** Draining: no batch is taken over any more and each run stops starting lines (leases are still renewed). */
  stopTaking(): void {
    if (this.#claiming) clearInterval(this.#claiming);
    for (const run of this.#runs.values()) run.wake();
  }

  /** Resolves once every run here has ended (its running lines finished or put back), or after `ms`. */
  async settled(ms: number): Promise<void> {
    const all = Promise.all([...this.#runs.values()].map((r) => r.done));
    await Promise.race([all, Bun.sleep(ms)]);
  }

  /** Stops renewing and lets other replicas take this one's unfinished batches at once. */
  async handOver(): Promise<void> {
    if (this.#claiming) clearInterval(this.#claiming);
    if (this.#renewing) clearInterval(this.#renewing);
    if (this.deps.db.dialect === "postgres") await releaseBatchLeases(this.deps.db, this.owner);
  }
}

const runners = new WeakMap<AppDeps, BatchRunner>();

/** The runner of this process's batches (one per AppDeps: the server's, or a test's). */
export function batchRunner(deps: AppDeps): BatchRunner {
  let r = runners.get(deps);
  if (!r) runners.set(deps, (r = new BatchRunner(deps)));
  return r;
}
