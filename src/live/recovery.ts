// What a replica does with stored responses nothing runs any more (left by a crash, or by a replica whose lease ran
// out): the family that stores them decides, and hands it to the job upkeep (upkeep.ts, leases.ts) at start.
import type { ResponseRow } from "../db/responses-repo.ts";

export interface Recovery {
  restarted: string[];
  failed: string[];
}

export interface JobRecovery {
  /** Ends or starts again these rows, claimed by this replica. */
  recover(rows: ResponseRow[]): Promise<Recovery>;
  /** Every unfinished row: a lone kiln's start, when nothing else can be running them. */
  recoverAll(): Promise<Recovery>;
}
