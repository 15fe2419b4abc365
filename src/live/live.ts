// The responses this process is producing right now: who is listening to their events, and how to stop them.
// A stored stream, a background job and every resumed stream meet here; events are published only once they are
// stored, so a listener that subscribes and then reads the store misses none. With a bus (live-bus.ts), each job's
// events and end also go to the other replicas, and their cancels reach its abort.
import { randomUUID } from "node:crypto";
import type { AbortReason } from "../inference/admitted-run.ts";
import type { Logger } from "../log/logger.ts";
import type { HeldLease } from "../db/response-leases-repo.ts";
import type { LiveBus, LiveEvent } from "./live-bus.ts";

/** Hears each event, then `null` once when the job ends. */
export type Listener = (ev: LiveEvent | null) => void;

interface Job {
  abort: (reason: AbortReason) => void;
  listeners: Set<Listener>;
  done: Promise<void>;
  finish: () => void;
  /** Stops taking cancels from the bus. */
  release: (() => void) | null;
  /** The lease it runs under (Postgres), and what stops it here once another replica has taken it (hold). */
  lease: { epoch: number; lost: () => void } | null;
}

/** The stream events after which nothing follows. */
export const TERMINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

export class LiveResponses {
  private readonly jobs = new Map<string, Job>();
  /** This process among the replicas: the owner of the leases on the stored responses it runs (leases.ts). */
  readonly replica = `kiln-${randomUUID()}`;

  /** `bus`: the replicas' channel (null: this process is the only one, and a job not live here is not running). */
  constructor(
    private readonly logger: Logger,
    readonly bus: LiveBus | null = null,
  ) {}

  /**
   * Registers a job, stopped by `abort`; its events go to listeners until `end`. One entry per response: a job already
   * live here is never started a second time (its entry, and its end, would be the new one's).
   */
  begin(id: string, abort: (reason: AbortReason) => void): void {
    if (this.jobs.has(id)) throw new Error(`stored response ${id} is already running here`);
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    // A cancel sent through another replica stops it as a local one does.
    const release = this.bus?.accept(id, () => this.abort(id, "cancelled")) ?? null;
    this.jobs.set(id, { abort, listeners: new Set(), done, finish, release, lease: null });
  }

  /** Records the lease a live job runs under once its row holds it; `lost` stops it when another replica claims it. */
  hold(id: string, lease: { epoch: number; lost: () => void }): void {
    const job = this.jobs.get(id);
    if (job) job.lease = lease;
  }

  /** The leases of the jobs live here: what the owner renews (leases.ts). */
  leased(): HeldLease[] {
    return [...this.jobs].flatMap(([id, j]) => (j.lease ? [{ id, epoch: j.lease.epoch }] : []));
  }

  /** Another replica claimed the job (its renewal or a write was refused): its run here stops and writes no more. */
  lose(id: string, epoch: number): void {
    const job = this.jobs.get(id);
    const lease = job?.lease;
    if (!job || !lease || lease.epoch !== epoch) return;
    job.lease = null;
    this.logger.warn("stored response taken over by another replica; its run here stops", { response_id: id, epoch });
    lease.lost();
  }

  /** The ids of the jobs live here, lost ones winding down included: a claim by this replica leaves them alone. */
  running(): string[] {
    return [...this.jobs.keys()];
  }

  publish(id: string, ev: LiveEvent): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.tell(id, job.listeners, ev);
    this.bus?.publish(id, ev);
  }

  end(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    this.tell(id, job.listeners, null);
    job.finish();
    job.release?.();
    this.bus?.end(id);
  }

  /** One listener that throws (a follower's stream gone bad) must not keep the others from hearing the event. */
  private tell(id: string, listeners: Iterable<Listener>, ev: LiveEvent | null): void {
    for (const l of listeners) {
      try {
        l(ev);
      } catch (e) {
        this.logger.error("live response listener failed", { response_id: id, error: String(e) });
      }
    }
  }

  /** Subscribes to a live job; null when the response is not being produced here. Returns the unsubscribe. */
  listen(id: string, l: Listener): (() => void) | null {
    const job = this.jobs.get(id);
    if (!job) return null;
    job.listeners.add(l);
    return () => job.listeners.delete(l);
  }

  isLive(id: string): boolean {
    return this.jobs.has(id);
  }

  /** Stops a live job within one generation step; false when it is not running here. */
  abort(id: string, reason: AbortReason): boolean {
    const job = this.jobs.get(id);
    if (!job) return false;
    job.abort(reason);
    return true;
  }

  /** True once the job has ended (at once when it is not live); false when it is still live after `ms`. */
  async ended(id: string, ms: number): Promise<boolean> {
    const done = this.jobs.get(id)?.done;
    if (!done) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
    try {
      return await Promise.race([done.then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves when every job has ended, or after `ms`. */
  async settled(ms: number): Promise<void> {
    const all = Promise.all([...this.jobs.values()].map((j) => j.done));
    await Promise.race([all, Bun.sleep(ms)]);
  }
}
