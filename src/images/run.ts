// The lifecycle of an images request, on the admitted-run skeleton generation runs on (src/inference/admitted-run.ts):
// the gate admits it (permissions, RPM/TPM on its prompt tokens, a billing hold of per-image price × n) before anything
// is queued, its renders share the scheduler's queue and drain with every other generation, and it settles once: the
// usage row with the images delivered and its charge, in one transaction. The client leaving or the time limit cancels
// what is still running.
import { ApiError } from "../errors/api-error.ts";
import { admitRun, type AdmittedRunDeps, type RequestScope, settleStatus } from "../inference/admitted-run.ts";
import { emptyUsage } from "../inference/blocks.ts";
import { logRequestFailure } from "../models/failures.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { RenderRequest } from "../protocol/image.ts";
import type { RenderEvent, Scheduler } from "../scheduler/scheduler.ts";

export interface RenderDeps extends Pick<AdmittedRunDeps, "db" | "logger" | "shutdown" | "gate"> {
  scheduler: Pick<Scheduler, "submitRenders">;
  /** Tokens and settlements (as generation counts them), images made and where their time went. */
  metrics?: AdmittedRunDeps["metrics"] & Pick<Metrics, "observeImages">;
}

export interface RenderJob {
  scope: RequestScope;
  model: ModelEntry;
  /** One per image. */
  renders: RenderRequest[];
  /** Prompt tokens the text encoder reads: what TPM and usage count. */
  promptTokens: number;
  /** The client's connection (its leaving cancels the renders). */
  clientSignal: AbortSignal;
  /** The non-streaming time limit, counted from admission (included): past it the renders stop and the answer is 504. */
  timeoutMs: number;
}

export type Rendered = Omit<RenderEvent, "type">;

/** One render's image; null when it was cancelled before it finished. */
async function imageOf(stream: AsyncIterable<RenderEvent>): Promise<Rendered | null> {
  let image: Rendered | null = null;
  for await (const ev of stream) image = { rgb: ev.rgb, width: ev.width, height: ev.height, timings: ev.timings };
  return image;
}

/** Runs the job's renders to the end; resolves with every image, or throws the first failure (after settling). */
export async function runRenders(deps: RenderDeps, job: RenderJob): Promise<Rendered[]> {
  const { scope, model } = job;
  // Refusals come in the order generation gives them: billing and limits first, then a model nothing serves (the queue's 503).
  const run = await admitRun(deps, { scope, model, clientSignal: job.clientSignal, timeoutMs: job.timeoutMs }, async () => ({
    inputTokens: job.promptTokens, maxOutputTokens: 0, choices: 1, images: job.renders.length,
  }));
  const { stop } = run;
  const streams = run.submit((signal, onStart) => deps.scheduler.submitRenders(job.renders.map((render) => ({ model: model.id, render, signal, onStart }))));
  // One failed render stops its siblings: the answer is that failure, and nothing more is rendered for it.
  const outcome = await Promise.allSettled(streams.map((s) => imageOf(s).catch((e: unknown) => {
    stop.abort("failed");
    throw e;
  })));
  const failure = outcome.find((o): o is PromiseRejectedResult => o.status === "rejected");
  const images = outcome.flatMap((o) => (o.status === "fulfilled" && o.value ? [o.value] : []));
  const complete = !failure && !stop.reason && images.length === job.renders.length;
  // Only a complete answer delivers images, so only then are they billed; the prompt counts once any render ran.
  const usage = { ...emptyUsage(), inputTokens: run.dispatched ? job.promptTokens : 0 };
  await run.settle({ status: settleStatus(stop.reason, !complete), usage, images: complete ? images.length : 0 });
  if (complete) {
    deps.metrics?.observeImages(model.id, scope.endpoint, images);
    return images;
  }
  if (failure) {
    logRequestFailure(deps.logger, failure.reason, scope.requestId, model.id);
    throw failure.reason;
  }
  if (stop.reason === "timed_out") throw ApiError.timeout(job.timeoutMs);
  // The client left: nobody reads this answer (499 in the log).
  if (stop.reason === "client_gone") throw new ApiError(499, "invalid_request_error", "The request stopped before it finished (client_gone).");
  // A render ended without an image and without anyone stopping it: the worker's doing.
  throw ApiError.internal();
}
