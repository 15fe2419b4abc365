// With several replicas on one Postgres, each holds a lease on the stored responses it runs and renews it; each looks
// for leases that ran out (a replica that died or was cut off) and takes those responses over as start-up recovery
// would (the family's JobRecovery: a queued job runs here, one in progress or a stored stream ends failed). Deadlines are
// the database's clock (response-leases-repo.ts). A replica never claims its own leases nor a job live in its process;
// one whose renewal finds a lease gone (claimed while it was paused or cut off) stops that job here, and the job's
// writes, fenced by owner and epoch, are refused from the claim on.
import type { AppDeps } from "../app-deps.ts";
import { claimExpiredLeases, lostLeases, releaseLeases, renewLeases } from "../db/response-leases-repo.ts";
import { CLAIM_BATCH, leaseTiming } from "./lease-timing.ts";
import type { JobRecovery, Recovery } from "./recovery.ts";

export interface Leases {
  /** Claims the responses whose lease ran out and recovers them here. */
  takeOver(): Promise<Recovery>;
  /** Stops looking for others' responses (draining); this replica's own leases are still renewed. */
  stopTakingOver(): void;
  /** Stops renewing and lets the other replicas take what this one leaves at once (the end of a drain). */
  handOver(): Promise<void>;
}

export function startLeases(deps: AppDeps, recovery: JobRecovery): Leases {
  const { db, logger, live } = deps;
  const owner = live.replica;
  const { leaseMs, renewEveryMs, claimEveryMs } = leaseTiming(deps.config.leaseMs);
  const takeOver = async (): Promise<Recovery> => {
    const rows = await claimExpiredLeases(db, owner, { leaseMs, limit: CLAIM_BATCH, running: live.running() });
    return await recovery.recover(rows);
  };
  const renewOnce = async () => {
    // Only jobs whose row was written before the renewal is sent: a lease missing from its answer was claimed.
    const held = live.leased();
    const kept = await renewLeases(db, owner, { ids: held.map((h) => h.id), leaseMs });
    for (const lost of lostLeases(held, kept)) live.lose(lost.id, lost.epoch);
  };
  let renewing = false;
  const renew = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renewOnce()
      .catch((e) => logger.error("stored response leases not renewed", { error: String(e) }))
      .finally(() => (renewing = false));
  }, renewEveryMs);
  let claiming = false;
  const claim = setInterval(() => {
    if (claiming) return;
    claiming = true;
    takeOver()
      .then(
        (r) => (r.restarted.length || r.failed.length) && logger.info("stored responses taken over", { background_restarted: r.restarted, failed: r.failed }),
        (e) => logger.error("stored response leases not checked", { error: String(e) }),
      )
      .finally(() => (claiming = false));
  }, claimEveryMs);
  renew.unref();
  claim.unref();
  return {
    takeOver,
    stopTakingOver: () => clearInterval(claim),
    async handOver() {
      clearInterval(claim);
      clearInterval(renew);
      await releaseLeases(db, owner);
    },
  };
}
