// The one text run every family's request goes through: prepare → admit (the hook where rate limits and billing plug in) →
// submit → run, aborted when the client leaves or the time limit passes (or detached, for background work) →
// settle exactly once, writing usage from the core's own count of generated tokens, whoever reads the stream.
import type { Config } from "../config.ts";
import type { UsageStatus } from "../db/usage-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { TokenTiming } from "../metrics/token-timing.ts";
import { logRequestFailure } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import { Channel } from "../scheduler/channel.ts";
import { type AbortReason, admitRun, type AdmittedRunDeps, type RequestScope, RunStop, settleStatus } from "./admitted-run.ts";
import { type CoreEvent, emptyUsage, type Usage } from "./blocks.ts";
import type { CoreDeps, CoreIntake } from "./core-deps.ts";
import { prepareGeneration, type Prepared, submitGeneration } from "./generate.ts";
import type { CoreRequest } from "./request.ts";
import { toolLoop } from "./tool-loop.ts";
import type { Admissions } from "../scheduler/admissions.ts";
import { isBackground } from "../protocol/lanes.ts";

export interface TextRunDeps extends CoreDeps, AdmittedRunDeps {
  /** Media and content-policy intake; absent, a request carrying media is refused. */
  intake?: Pick<CoreIntake, "prepare">;
  /** TTFT, inter-token latency and token counters, and settlements the database refused or took from the journal. */
  metrics?: Pick<Metrics, "observeUsage" | "observeFirstToken" | "observeInterToken" | "settlementFailed" | "settlementsReplayed">;
  /** Who shares cached prompt prefixes (absent: each team its own). */
  config?: Pick<Config, "prefixSharing">;
  /** Counts the run's requests while they are prepared, so the worker knows more of a burst is coming. */
  admissions?: Pick<Admissions, "begin">;
}

/**
 * The prompt tokens a request renders to, counted as a run would bill them: its media read, decoded and placed
 * (image and audio rows are prompt tokens), nothing queued. The client's leaving or the time limit stops the intake
 * as they stop a run's (499, 504).
 */
export async function countPrompt(
  deps: TextRunDeps,
  model: ModelEntry,
  request: CoreRequest,
  who: { teamId: number; keyId: number },
  opts: { clientSignal: AbortSignal; timeoutMs: number },
): Promise<number> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const stop = new RunStop(opts.clientSignal, opts.timeoutMs);
  try {
    await takeMedia(deps, stop, model, request, who);
  } finally {
    stop.close();
  }
  return (await prepareGeneration(deps, model, request)).promptIds.length;
}

/** Reads, decodes and screens a request's media under a run's switch: the client's leaving or the time limit stops it (499, 504). */
async function takeMedia(deps: TextRunDeps, stop: RunStop, model: ModelEntry, request: CoreRequest, who: { teamId: number; keyId: number }): Promise<void> {
  // A fetch or decode stopped by the abort rejects with the abort's reason: the abort is what happened.
  await stop.cut(Promise.resolve(deps.intake?.prepare(request, model, who, stop.signal)));
  stop.check();
}

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

export async function startRun(deps: TextRunDeps, opts: RunOptions): Promise<Run> {
  const startedAt = performance.now();
  const requests = [opts.request, ...(opts.siblings ?? [])];
  const prepared: Prepared[] = [];
  // From here until its sequences are handed over, the run is one the model has coming (src/scheduler/admissions.ts).
  // Background lines (batch, flex) are not waited for: a batch prepares them all the time, and they yield anyway.
  const preparing = isBackground(opts.scope.tier) ? undefined : deps.admissions?.begin(opts.model.id);
  let run: Awaited<ReturnType<typeof admitRun>>;
  try {
    // The time limit runs from here, so a slow tokenize or prepare counts against it; the client's leaving stops media intake too.
    run = await admitRun(deps, opts, async (stop) => {
      await takeMedia(deps, stop, opts.model, opts.request, opts.scope);
      const lane = opts.scope.tier ? { lane: opts.scope.tier } : {};
      for (const request of requests) prepared.push({ ...(await prepareGeneration(deps, opts.model, request, { teamId: opts.scope.teamId, sharing: deps.config?.prefixSharing ?? "team" })), ...lane });
      return {
        inputTokens: promptTokens(prepared), maxOutputTokens: Math.max(...prepared.map((p) => p.maxTokens)),
        choices: requests.reduce((sum, r) => sum + r.n, 0), resumed: opts.resumed,
      };
    });
  } finally {
    // Prepared (or refused): the add this run's submit sends counts the others still on their way, not this one.
    preparing?.();
  }
  const { stop } = run;
  // Built-in tools run as one choice whose steps the tool loop chains; everything else is one generation.
  const streams = run.submit((signal, onStart) => opts.request.builtins?.length
    ? [toolLoop(deps, prepared[0]!, signal, onStart)]
    : prepared.flatMap((p) => submitGeneration(deps, p, signal, onStart)));
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
    const status = settleStatus(stop.reason, failed);
    // Nothing ran, and the job's next run settles under the same request id (a cancel still ends it here).
    if (!run.dispatched && (forfeited || (opts.resumable && deps.shutdown.draining && stop.reason !== "cancelled"))) {
      await run.settle(null);
      return { status, usage: emptyUsage() };
    }
    const settlement: Settlement = { status, usage: run.dispatched ? totalUsage(perChoice, inputTokens) : emptyUsage() };
    await run.settle(settlement);
    return settlement;
  });
  return {
    inputTokens,
    choices: channels,
    abort: (reason) => stop.abort(reason),
    forfeit() {
      forfeited = true;
      stop.abort("failed");
    },
    get abortReason() {
      return stop.reason;
    },
    settled,
  };
}
