// With several replicas on one Postgres, each holds a lease on the stored responses it runs and renews it; each looks
// for leases that ran out (a replica that died or was cut off) and takes those responses over as start-up recovery
// would: a queued job runs here, one in progress or a stored stream ends failed (stored.ts recoverRows).
import type { AppDeps } from "../../app-deps.ts";
import { claimExpiredLeases, releaseLeases, renewLeases } from "../../db/response-leases-repo.ts";
import { CLAIM_BATCH, CLAIM_EVERY_MS, LEASE_MS, RENEW_EVERY_MS } from "./lease-timing.ts";
import { recoverRows, type Recovery } from "./stored.ts";

export interface Leases {
  /** Claims the responses whose lease ran out and recovers them here. */
  takeOver(): Promise<Recovery>;
  /** Stops looking for others' responses (draining); this replica's own leases are still renewed. */
  stopTakingOver(): void;
  /** Stops renewing and lets the other replicas take what this one leaves at once (the end of a drain). */
  handOver(): Promise<void>;
}

export function startLeases(deps: AppDeps): Leases {
  const owner = deps.live.replica;
  const { db, logger } = deps;
  const takeOver = async (): Promise<Recovery> => {
    const now = Date.now();
    const rows = await claimExpiredLeases(db, owner, { nowMs: now, untilMs: now + LEASE_MS, limit: CLAIM_BATCH });
    return await recoverRows(deps, rows);
  };
  let renewing = false;
  const renew = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renewLeases(db, owner, Date.now() + LEASE_MS)
      .catch((e) => logger.error("stored response leases not renewed", { error: String(e) }))
      .finally(() => (renewing = false));
  }, RENEW_EVERY_MS);
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
  }, CLAIM_EVERY_MS);
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
