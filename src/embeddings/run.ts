// The lifecycle of an embeddings request, on the admitted-run skeleton generation runs on (src/inference/admitted-run.ts):
// the gate admits it (permissions, RPM and TPM on its input tokens, a billing hold at the input price) before anything
// is queued, its job shares the scheduler's queue and budget with every other kind of work, and it settles once: the
// usage row with its input tokens, charged only when the vectors were delivered. The client leaving or the time limit
// cancels the job.
import { ApiError } from "../errors/api-error.ts";
import { admitRun, type AdmittedRunDeps, type RequestScope, settleStatus } from "../inference/admitted-run.ts";
import { emptyUsage } from "../inference/blocks.ts";
import { logRequestFailure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { EmbedEvent, Scheduler } from "../scheduler/scheduler.ts";

export interface EmbedDeps extends Pick<AdmittedRunDeps, "db" | "logger" | "shutdown" | "gate" | "metrics"> {
  scheduler: Pick<Scheduler, "submitEmbeds">;
}

export interface EmbedJob {
  scope: RequestScope;
  model: ModelEntry;
  /** Token rows, one per input, each within the model's context. */
  rows: number[][];
  clientSignal: AbortSignal;
  /** Counted from admission (included): past it the job stops and the answer is 504. */
  timeoutMs: number;
}

export type Embedded = Omit<EmbedEvent, "type">;

/** Runs the job; resolves with every input's vector (flattened), or throws (after settling). */
export async function runEmbeddings(deps: EmbedDeps, job: EmbedJob): Promise<Embedded> {
  const { scope, model } = job;
  const tokens = job.rows.reduce((sum, r) => sum + r.length, 0);
  const run = await admitRun(deps, { scope, model, clientSignal: job.clientSignal, timeoutMs: job.timeoutMs }, async () => ({
    inputTokens: tokens, maxOutputTokens: 0, choices: 1,
  }));
  const stream = run.submit((signal, onStart) => deps.scheduler.submitEmbeds({ model: model.id, inputs: job.rows, signal, onStart, ...(scope.tier ? { lane: scope.tier } : {}) }));
  let result: Embedded | null = null;
  let failure: unknown = null;
  try {
    for await (const ev of stream) result = { vectors: ev.vectors, dimensions: ev.dimensions };
  } catch (e) {
    failure = e;
  }
  const { reason } = run.stop;
  // Only delivered vectors are billed: a failed or cancelled job counts no tokens.
  const delivered = result !== null && !reason;
  await run.settle({ status: settleStatus(reason, !delivered), usage: { ...emptyUsage(), inputTokens: delivered ? tokens : 0 } });
  if (delivered) return result!;
  if (failure && !reason) {
    logRequestFailure(deps.logger, failure, scope.requestId, model.id);
    throw failure;
  }
  if (reason === "timed_out") throw ApiError.timeout(job.timeoutMs);
  if (reason) throw new ApiError(499, "invalid_request_error", `The request stopped before it finished (${reason}).`);
  // The job ended without vectors and without anyone stopping it: the worker's doing.
  throw ApiError.internal();
}
