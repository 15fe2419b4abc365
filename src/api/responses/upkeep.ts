// At start-up and then hourly: background jobs left behind by a crash or shutdown are recovered (stored.ts), and
// stored responses past their retention are deleted with their input items and events.
import type { AppDeps } from "../../app-deps.ts";
import { sweepExpired } from "../../db/responses-repo.ts";
import { recoverBackground } from "./stored.ts";

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

export async function startResponseUpkeep(deps: AppDeps): Promise<{ stop(): void }> {
  const t0 = performance.now();
  const swept = await sweep(deps);
  const recovered = await recoverBackground(deps);
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
  return { stop: () => clearInterval(timer) };
}
