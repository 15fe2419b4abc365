// The skeleton every run shares, text and images alike: a stop switch (the client leaving, the time limit, a caller's
// abort; the first reason kept), admission before anything is queued, the queue's start hook, and one settlement that
// clears the timer and the listener, writes the usage row with its charge and gives back what admission held.
import { costMicros } from "../billing/cost.ts";
import { FULL_PRICE } from "../billing/tier-prices.ts";
import { settle as settleUsage, type SettleDeps } from "../billing/settle.ts";
import type { UsageStatus } from "../db/usage-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { logRequestFailure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { Usage } from "./blocks.ts";
import type { ServiceTier } from "./service-tier.ts";

/** Who is asking, for usage rows (and later limits, billing and metrics). */
export interface RequestScope {
  requestId: string;
  teamId: number;
  keyId: number;
  /** The endpoint family the request came through (for usage rows and metrics labels). */
  endpoint: string;
  /** The lane it runs in (absent: "default"): where it waits, which limits it counts against, its price factor. */
  tier?: ServiceTier;
  /** The batch it is a line of (its usage row names it, for the batch's cost). */
  batchId?: string;
}

/** What admission sees: the counted prompt and the most output the request may produce. */
export interface Admission {
  scope: RequestScope;
  model: ModelEntry;
  inputTokens: number;
  maxOutputTokens: number;
  choices: number;
  /** Images the request renders (the images endpoints): held and charged at the model's per-image price. */
  images?: number;
  /**
   * A request acknowledged before a restart (a recovered background job): no rate limit refuses it, since the client
   * was already told it would run; its key, permissions and balance are checked again, and it reserves and holds.
   */
  resumed?: boolean;
}

/** What an admitted request holds (reserved tokens, a held price) until it settles. */
export interface AdmissionTicket {
  /** Gives back what was held, reconciled with what was used (null: nothing ran). Called once. */
  release(used: Usage | null): void;
  /** The price factor its tier is charged at, in thousandths (absent: 1000, the model's list price). */
  priceFactorMilli?: number;
}

/** Why a run was stopped early: its client left, the time limit, a cancel, or a failure in a sibling choice or the encoder. */
export type AbortReason = "client_gone" | "timed_out" | "cancelled" | "failed";

/** What a run stopped before it began answers: 504 past the time limit; a client that left gets nothing (499 in the log). */
export function abortedBeforeRun(reason: AbortReason, timeoutMs: number | null): ApiError {
  if (reason === "timed_out") return ApiError.timeout(timeoutMs ?? 0);
  return new ApiError(499, "invalid_request_error", `The request stopped before it ran (${reason}).`);
}

/** How the request ended, for its usage row: an abort says why; otherwise any failure means failed. */
export function settleStatus(abort: AbortReason | null, failed: boolean): UsageStatus {
  if (abort) return abort;
  return failed ? "failed" : "completed";
}

/**
 * A run's stop switch: its signal aborts when the client leaves (null: a detached run no client can stop), when the
 * time limit counted from its making passes (null or 0: none), or on abort(); the first reason is kept.
 */
export class RunStop {
  readonly #controller = new AbortController();
  readonly #client: AbortSignal | null;
  readonly #timer: ReturnType<typeof setTimeout> | null;
  readonly #onClientGone = () => this.abort("client_gone");
  #reason: AbortReason | null = null;

  constructor(client: AbortSignal | null, readonly timeoutMs: number | null) {
    this.#client = client;
    this.#timer = timeoutMs ? setTimeout(() => this.abort("timed_out"), timeoutMs) : null;
    if (client?.aborted) this.abort("client_gone");
    client?.addEventListener("abort", this.#onClientGone, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get reason(): AbortReason | null {
    return this.#reason;
  }

  abort(reason: AbortReason): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller.abort(reason);
  }

  /** Awaits work the switch cuts short (a media fetch or decode): its failure once the switch tripped is the stop's answer. */
  async cut<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (e) {
      throw this.#reason ? abortedBeforeRun(this.#reason, this.timeoutMs) : e;
    }
  }

  /** Throws the stop's answer (499, 504) once the switch has tripped: nothing more starts for a stopped run. */
  check(): void {
    if (this.#reason) throw abortedBeforeRun(this.#reason, this.timeoutMs);
  }

  /** Clears the timer and the client's listener; the reason stays. */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#client?.removeEventListener("abort", this.#onClientGone);
  }
}

export interface AdmittedRunDeps extends SettleDeps {
  shutdown: { draining: boolean };
  /** Admission (rate limits, billing): runs after the prompt is counted and before anything is queued; throws an ApiError to refuse. */
  gate?: { admit(a: Admission): Promise<AdmissionTicket> };
  metrics?: SettleDeps["metrics"] & Pick<Metrics, "observeUsage"> & Partial<Pick<Metrics, "observeSettled">>;
}

export interface AdmittedRunOptions {
  scope: RequestScope;
  model: ModelEntry;
  /** The client's connection; null runs detached. */
  clientSignal: AbortSignal | null;
  /** Counted from the start of the run, preparation and admission included; null: none. */
  timeoutMs: number | null;
  /** Called once, synchronously, when the first piece of work leaves the scheduler's queue. */
  onStarted?: () => void;
}

/** How a run ended, for its usage row: `images` delivered are priced per image. */
export interface RunEnd {
  status: UsageStatus;
  usage: Usage;
  images?: number;
}

export interface AdmittedRun {
  readonly stop: RunStop;
  /** Whether any work reached a worker: one that never left the queue cost nothing. */
  readonly dispatched: boolean;
  /** Queues the run's work with its signal and start hook; refused at the queue, it gives back the hold and settles nothing. */
  submit<T>(queue: (signal: AbortSignal, onStart: () => void) => T): T;
  /**
   * Ends the run, once (a later call gets the first's promise): clears the switch, writes the usage row (null writes
   * none: nothing ran and the next run settles) and gives back what admission held; never throws.
   */
  settle(end: RunEnd | null): Promise<void>;
}

/**
 * Opens the switch, prepares (counting the prompt, under the switch) and admits the run. A refusal or a failure in
 * preparing closes the switch and is thrown, logged when it was the model's backend: nothing is held or billed.
 */
export async function admitRun(
  deps: AdmittedRunDeps, opts: AdmittedRunOptions, prepare: (stop: RunStop) => Promise<Omit<Admission, "scope" | "model">>,
): Promise<AdmittedRun> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const { scope, model } = opts;
  const stop = new RunStop(opts.clientSignal, opts.timeoutMs);
  let ticket: AdmissionTicket | undefined;
  try {
    const admission = await prepare(stop);
    ticket = await deps.gate?.admit({ scope, model, ...admission });
  } catch (e) {
    stop.close();
    // A tokenizer's failure is thrown here, not streamed: its log line still names the request.
    logRequestFailure(deps.logger, e, scope.requestId, model.id);
    throw e;
  }
  let dispatched = false;
  let settling: Promise<void> | null = null;
  const settle = (end: RunEnd | null) =>
    (settling ??= (async () => {
      stop.close();
      if (end) await settleRequest(deps, scope, model, end, ticket?.priceFactorMilli);
      ticket?.release(end?.usage ?? null);
    })());
  const onStart = () => {
    if (dispatched) return;
    dispatched = true;
    opts.onStarted?.();
  };
  return {
    stop,
    get dispatched() {
      return dispatched;
    },
    submit(queue) {
      try {
        return queue(stop.signal, onStart);
      } catch (e) {
        // Refused at the queue (503 overloaded, or no worker): nothing ran, nothing is held or billed.
        void settle(null);
        throw e;
      }
    },
    settle,
  };
}

/**
 * Counts the tokens and settles the request's usage row with its charge (src/billing/settle.ts: retried, else
 * journaled); never throws. `end.images`: the images delivered (the images endpoints), priced per image;
 * `factorMilli`: the tier's price factor admission chose (src/billing/tier-prices.ts).
 */
export function settleRequest(
  deps: Pick<AdmittedRunDeps, "db" | "logger" | "metrics">, scope: RequestScope, model: ModelEntry, end: RunEnd, factorMilli = FULL_PRICE,
): Promise<void> {
  const { status, usage: u, images = 0 } = end;
  const serviceTier = scope.tier ?? "default";
  deps.metrics?.observeUsage({ model: model.id, endpoint: scope.endpoint, team: String(scope.teamId) }, u);
  deps.metrics?.observeSettled?.({ model: model.id, endpoint: scope.endpoint, tier: serviceTier }, status, u);
  return settleUsage(deps, {
    requestId: scope.requestId, teamId: scope.teamId, keyId: scope.keyId, model: model.id, endpoint: scope.endpoint,
    status, inputTokens: u.inputTokens, outputTokens: u.outputTokens, reasoningTokens: u.reasoningTokens, cachedTokens: u.cachedTokens, images,
    costMicros: costMicros(model.pricing, { ...u, images }, factorMilli), createdAt: Math.floor(Date.now() / 1000),
    serviceTier, priceFactorMilli: factorMilli, ...(scope.batchId ? { batchId: scope.batchId } : {}),
  });
}
