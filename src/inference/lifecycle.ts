// The one request lifecycle every family shares: prepare → admit (the hook where rate limits and billing plug in) →
// submit → run, aborted when the client leaves or the time limit passes (or detached, for background work) →
// settle exactly once, writing usage from the core's own count of generated tokens, whoever reads the stream.
import { costMicros } from "../billing/cost.ts";
import { settle as settleUsage } from "../billing/settle.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { UsageStatus } from "../db/usage-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { TokenTiming } from "../metrics/token-timing.ts";
import { logRequestFailure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import { Channel } from "../scheduler/channel.ts";
import { type CoreEvent, emptyUsage, type Usage } from "./blocks.ts";
import type { CoreDeps, CoreIntake } from "./core-deps.ts";
import { prepareGeneration, type Prepared, submitGeneration } from "./generate.ts";
import type { CoreRequest } from "./request.ts";
import { toolLoop } from "./tool-loop.ts";

/** Who is asking, for usage rows (and later limits, billing and metrics). */
export interface RequestScope {
  requestId: string;
  teamId: number;
  keyId: number;
  /** The endpoint family the request came through (for usage rows and metrics labels). */
  endpoint: string;
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
}

export interface LifecycleDeps extends CoreDeps {
  db: Db;
  logger: Logger;
  lifecycle: { draining: boolean };
  /** Media and content-policy intake; absent, a request carrying media is refused. */
  intake?: Pick<CoreIntake, "prepare">;
  /** Admission (rate limits, billing): runs after the prompt is counted and before anything is queued; throws an ApiError to refuse. */
  gate?: { admit(a: Admission): Promise<AdmissionTicket> };
  /** TTFT, inter-token latency and token counters, and settlements the database refused or took from the journal. */
  metrics?: Pick<Metrics, "observeUsage" | "observeFirstToken" | "observeInterToken" | "settlementFailed" | "settlementsReplayed">;
  /** Who shares cached prompt prefixes (absent: each team its own). */
  config?: Pick<Config, "prefixSharing">;
}

/**
 * The prompt tokens a request renders to, counted as a run would bill them: its media read, decoded and placed
 * (image and audio rows are prompt tokens), nothing queued. The client's leaving or the time limit stops the intake
 * as they stop a run's (499, 504).
 */
export async function countPrompt(
  deps: LifecycleDeps,
  model: ModelEntry,
  request: CoreRequest,
  who: { teamId: number; keyId: number },
  opts: { clientSignal: AbortSignal; timeoutMs: number },
): Promise<number> {
  if (deps.lifecycle.draining) throw ApiError.shuttingDown();
  const limit = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.clientSignal, limit]);
  const stopped = () => abortedBeforeRun(limit.aborted ? "timed_out" : "client_gone", opts.timeoutMs);
  await deps.intake?.prepare(request, model, who, signal).catch((e: unknown) => {
    throw signal.aborted ? stopped() : e;
  });
  if (signal.aborted) throw stopped();
  return (await prepareGeneration(deps, model, request)).promptIds.length;
}

/** Why a run was stopped early: its client left, the time limit, a cancel, or a failure in a sibling choice or the encoder. */
export type AbortReason = "client_gone" | "timed_out" | "cancelled" | "failed";

export interface RunOptions {
  scope: RequestScope;
  model: ModelEntry;
  request: CoreRequest;
  /**
   * Further requests admitted, run and billed with `request` as one (the legacy format's array of prompts): their
   * choices follow its own, in order, and their prompts add to its input tokens.
   */
  siblings?: CoreRequest[];
  /** The client's connection; null runs detached (background work no client connection can stop). */
  clientSignal: AbortSignal | null;
  /** Non-streaming time limit, counted from the start of the run (prompt preparation included); past it the generation stops. */
  timeoutMs: number | null;
  /** Called once, synchronously, when the generation leaves the scheduler's queue (a background job's in_progress). */
  onStarted?: () => void;
  /** Admitted without refusals: see Admission.resumed. */
  resumed?: boolean;
  /**
   * A background job, run again under the same request id after a drain cuts it: one the drain stops before it reached
   * a worker settles nothing (its next run settles).
   */
  resumable?: boolean;
}

export interface Settlement {
  status: UsageStatus;
  usage: Usage;
}

export interface Run {
  inputTokens: number;
  /** One event stream per choice, buffered: the core runs to its end even if nobody reads them. */
  choices: AsyncIterable<CoreEvent>[];
  /** Stops the generation within one step; the settlement records why. */
  abort(reason: AbortReason): void;
  /**
   * Stops it because another replica took its job over (a lost lease): if it never reached a worker it settles nothing,
   * since the job's new run settles under the same request id; one that did settles as failed.
   */
  forfeit(): void;
  readonly abortReason: AbortReason | null;
  /** Resolves once every choice has ended and usage is written. */
  settled: Promise<Settlement>;
}

/**
 * Sums the choices' usage: the prompt is counted once (n choices share it), outputs add up. A choice that ran
 * several generation steps (the built-in tool loop) reports the sum of its steps' prompts, and that is billed.
 */
export function totalUsage(perChoice: Usage[], inputTokens: number): Usage {
  const u = { ...emptyUsage(), inputTokens: Math.max(inputTokens, ...perChoice.map((c) => c.inputTokens)) };
  for (const c of perChoice) {
    u.outputTokens += c.outputTokens;
    u.reasoningTokens += c.reasoningTokens;
    u.cachedTokens = Math.max(u.cachedTokens, c.cachedTokens);
  }
  return u;
}

/** The prompt tokens of a run's prepared requests (one, or one per prompt of the legacy format). */
const promptTokens = (prepared: Prepared[]) => prepared.reduce((sum, p) => sum + p.promptIds.length, 0);

/** How the request ended, for its usage row: an abort says why; otherwise any error means failed. */
export function settleStatus(abort: AbortReason | null, failed: boolean): UsageStatus {
  if (abort) return abort;
  return failed ? "failed" : "completed";
}

/** What a run stopped before it began answers: 504 past the time limit; a client that left gets nothing (499 in the log). */
export function abortedBeforeRun(reason: AbortReason, timeoutMs: number | null): ApiError {
  if (reason === "timed_out") return ApiError.timeout(timeoutMs ?? 0);
  return new ApiError(499, "invalid_request_error", `The request stopped before it ran (${reason}).`);
}

export async function startRun(deps: LifecycleDeps, opts: RunOptions): Promise<Run> {
  if (deps.lifecycle.draining) throw ApiError.shuttingDown();
  const startedAt = performance.now();
  const controller = new AbortController();
  let abortReason: AbortReason | null = null;
  const abort = (reason: AbortReason) => {
    if (abortReason) return;
    abortReason = reason;
    controller.abort(reason);
  };
  // The time limit runs from here, so a slow tokenize or prepare counts against it.
  const timer = opts.timeoutMs ? setTimeout(() => abort("timed_out"), opts.timeoutMs) : null;
  // The client's leaving stops the run from here on, media intake included (a fetch or decode it no longer needs).
  const onClientGone = () => abort("client_gone");
  if (opts.clientSignal?.aborted) abort("client_gone");
  opts.clientSignal?.addEventListener("abort", onClientGone, { once: true });
  const cleanup = () => {
    if (timer) clearTimeout(timer);
    opts.clientSignal?.removeEventListener("abort", onClientGone);
  };
  const requests = [opts.request, ...(opts.siblings ?? [])];
  const prepared: Prepared[] = [];
  let ticket: AdmissionTicket | undefined;
  try {
    await deps.intake?.prepare(opts.request, opts.model, opts.scope, controller.signal).catch((e: unknown) => {
      // A fetch or decode stopped by the abort rejects with the abort's reason: the abort is what happened.
      throw abortReason ? abortedBeforeRun(abortReason, opts.timeoutMs) : e;
    });
    if (abortReason) throw abortedBeforeRun(abortReason, opts.timeoutMs);
    for (const request of requests) prepared.push(await prepareGeneration(deps, opts.model, request, { teamId: opts.scope.teamId, sharing: deps.config?.prefixSharing ?? "team" }));
    ticket = await deps.gate?.admit({
      scope: opts.scope, model: opts.model, inputTokens: promptTokens(prepared), maxOutputTokens: Math.max(...prepared.map((p) => p.maxTokens)),
      choices: requests.reduce((sum, r) => sum + r.n, 0), resumed: opts.resumed,
    });
  } catch (e) {
    cleanup();
    // A tokenizer's failure is thrown here, not streamed: its log line still names the request.
    logRequestFailure(deps.logger, e, opts.scope.requestId, opts.model.id);
    throw e;
  }

  let streams: AsyncIterable<CoreEvent>[];
  // Whether any sequence reached a worker: one that never left the queue (cancelled, drained, its worker lost
  // before it ran) cost nothing and is billed nothing, its prompt included.
  let dispatched = false;
  try {
    // Built-in tools run as one choice whose steps the tool loop chains; everything else is one generation.
    const onStart = () => {
      if (dispatched) return;
      dispatched = true;
      opts.onStarted?.();
    };
    streams = opts.request.builtins?.length
      ? [toolLoop(deps, prepared[0]!, controller.signal, onStart)]
      : prepared.flatMap((p) => submitGeneration(deps, p, controller.signal, onStart));
  } catch (e) {
    cleanup();
    ticket?.release(null);
    throw e;
  }
  const inputTokens = promptTokens(prepared);
  const perChoice: Usage[] = streams.map(() => ({ ...emptyUsage(), inputTokens }));
  let failed = false;
  const channels = streams.map(() => new Channel<CoreEvent>());
  const pumps = streams.map(async (stream, i) => {
    const timing = deps.metrics && new TokenTiming(deps.metrics, { model: opts.model.id, endpoint: opts.scope.endpoint }, startedAt);
    try {
      for await (const ev of stream) {
        if (ev.type === "block_delta") timing?.output(performance.now());
        if (ev.type === "usage") perChoice[i] = ev.usage;
        if (ev.type === "error") {
          failed = true;
          logRequestFailure(deps.logger, ev.error, opts.scope.requestId, opts.model.id);
        }
        channels[i]!.push(ev);
      }
    } catch (e) {
      // The core turns failures into error events; anything else still ends the choice, as an internal error.
      failed = true;
      channels[i]!.push({ type: "error", error: e instanceof ApiError ? e : ApiError.internal() });
    }
    channels[i]!.close();
  });

  let forfeited = false;
  const settled = Promise.all(pumps).then(async () => {
    cleanup();
    // Nothing ran, and the job's next run settles under the same request id (a cancel still ends it here).
    if (!dispatched && (forfeited || (opts.resumable && deps.lifecycle.draining && abortReason !== "cancelled"))) {
      ticket?.release(null);
      return { status: settleStatus(abortReason, failed), usage: emptyUsage() };
    }
    const settlement: Settlement = { status: settleStatus(abortReason, failed), usage: dispatched ? totalUsage(perChoice, inputTokens) : emptyUsage() };
    await settleRequest(deps, opts.scope, opts.model, settlement.status, settlement.usage);
    ticket?.release(settlement.usage);
    return settlement;
  });
  return {
    inputTokens,
    choices: channels,
    abort,
    forfeit() {
      forfeited = true;
      abort("failed");
    },
    get abortReason() {
      return abortReason;
    },
    settled,
  };
}

/**
 * Counts the tokens and settles the request's usage row with its charge (src/billing/settle.ts: retried, else
 * journaled); never throws. `images`: the images delivered (the images endpoints), priced per image.
 */
export function settleRequest(
  deps: Pick<LifecycleDeps, "db" | "logger" | "metrics">, scope: RequestScope, model: ModelEntry, status: UsageStatus, u: Usage, images = 0,
): Promise<void> {
  deps.metrics?.observeUsage({ model: model.id, endpoint: scope.endpoint, team: String(scope.teamId) }, u);
  return settleUsage(deps, {
    requestId: scope.requestId, teamId: scope.teamId, keyId: scope.keyId, model: model.id, endpoint: scope.endpoint,
    status, inputTokens: u.inputTokens, outputTokens: u.outputTokens, reasoningTokens: u.reasoningTokens, cachedTokens: u.cachedTokens, images,
    costMicros: costMicros(model.pricing, { ...u, images }), createdAt: Math.floor(Date.now() / 1000),
  });
}
