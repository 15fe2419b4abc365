// At start-up and then hourly: background jobs left behind by a crash or shutdown are recovered (the family's JobRecovery), and
// stored responses past their retention are deleted with their input items and events. On Postgres, shared by
// replicas, recovery only takes responses whose lease ran out, at start-up and then every second (leases.ts).
import type { AppDeps } from "../app-deps.ts";
import { sweepExpired } from "../db/responses-repo.ts";
import { startLeases } from "./leases.ts";
import type { JobRecovery } from "./recovery.ts";

const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** Deletes every expired response a batch at a time, letting requests in between batches (a batch may hold many events). */
async function sweep(deps: AppDeps): Promise<number> {
  let total = 0;
  for (let n = await sweepExpired(deps.db); n > 0; n = await sweepExpired(deps.db)) {
    total += n;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return total;
}

export interface ResponseUpkeep {
  /** Stops the sweeps (draining): this replica's leases are still renewed while it finishes what it runs. */
  stop(): void;
  /** Lets other replicas take what this one leaves unfinished, at once (after the drain). */
  handOver(): Promise<void>;
}

export async function startResponseUpkeep(deps: AppDeps, recovery: JobRecovery): Promise<ResponseUpkeep> {
  const t0 = performance.now();
  const swept = await sweep(deps);
  // SQLite has one kiln: whatever is unfinished at its start was left by it. Postgres may have other live replicas.
  const leases = deps.db.dialect === "postgres" ? startLeases(deps, recovery) : null;
  const recovered = leases ? await leases.takeOver() : await recovery.recoverAll();
  if (swept || recovered.restarted.length || recovered.failed.length) {
    deps.logger.info("stored responses checked", {
      expired_deleted: swept, background_restarted: recovered.restarted, background_failed: recovered.failed, took_ms: Math.round(performance.now() - t0),
    });
  }
  const timer = setInterval(() => {
    sweep(deps).then(
      (n) => n && deps.logger.info("expired responses deleted", { count: n }),
      (e) => deps.logger.error("response sweep failed", { error: String(e) }),
    );
  }, SWEEP_EVERY_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      leases?.stopTakingOver();
    },
    handOver: async () => await leases?.handOver(),
  };
}
