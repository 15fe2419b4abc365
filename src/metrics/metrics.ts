// kiln's Prometheus metrics (prom-client): one registry per server, the instruments the HTTP layer, the request
// lifecycle and the worker supervisor feed, and gauges read from the scheduler and the workers at scrape time.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PrefixCacheStats } from "../protocol/text.ts";
import { PrefixCacheTally } from "./prefix-cache-tally.ts";

/** Request durations: an API call takes milliseconds, a long generation minutes (the non-streaming limit is 300 s). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
/** Time to first token: prefill on CPU takes tens of milliseconds to many seconds, plus any time queued. */
export const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 20, 40, 80];
/** Inter-token latency: one decode step, a few milliseconds on a GPU, tens to hundreds on a CPU. */
export const ITL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5];

/** What the scrape reads from the running server (absent in tests that run no workers). */
export interface RuntimeSources {
  /** Where each served model runs, and in which weight format (fixed at start). */
  devices?(): { model: string; device: string; weights: string }[];
  /** Sequences waiting for a worker slot, by model (every served model, 0 included). */
  queueDepth(): Record<string, number>;
  /** The same, split by service tier (the scheduler's lanes), where the scheduler reports it. */
  queueDepthByTier?(): { model: string; tier: string; depth: number }[];
  /** Every worker: its model and the sequences it is decoding now. */
  workers(): WorkerStat[];
}

export interface WorkerStat {
  workerId: number;
  model: string;
  /** The supervisor's lifecycle state (loading, ready, dead), where the source reports it. */
  state?: string;
  held: number;
  rssBytes: number;
}

/** A request as the HTTP layer saw it end. */
export interface RequestObservation {
  method: string;
  /** The route's pattern (`/v1/models/:model`), never the raw path; "unmatched" for paths no route serves. */
  route: string;
  status: number;
  /** The team id, or "" when no key was checked (or it was refused); a label only with per-team series on. */
  team: string;
  seconds: number;
}

/** Why an answer refused a request before any work: the rate limiter (429) or billing (402). */
export function refusalReason(status: number): "rate_limit" | "billing" | null {
  if (status === 429) return "rate_limit";
  if (status === 402) return "billing";
  return null;
}

const HEAP_SPACE_METRICS = ["nodejs_heap_space_size_total_bytes", "nodejs_heap_space_size_used_bytes", "nodejs_heap_space_size_available_bytes"];

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export class Metrics {
  readonly registry = new Registry();
  /**
   * Per-team series (KILN_METRICS_TEAM_LABELS): off by default, since every team ever served would add series for
   * the life of the process; per-team accounting is in the usage table (`kiln usage`).
   */
  private readonly teamLabels: boolean;
  private readonly requests = new Counter({
    name: "kiln_http_requests_total", help: "HTTP requests answered, by method, route pattern, status (and team id, with per-team series on)",
    labelNames: ["method", "route", "status", "team"] as const, registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "kiln_http_request_duration_seconds", help: "Time from request arrival to the end of its answer (a stream's last frame)",
    labelNames: ["method", "route", "status"] as const, buckets: DURATION_BUCKETS, registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: "kiln_refusals_total", help: "Requests refused before any work: reason rate_limit (429) or billing (402) (and team id, with per-team series on)",
    labelNames: ["reason", "team"] as const, registers: [this.registry],
  });
  private readonly inputTokens = new Counter({
    name: "kiln_input_tokens_total", help: "Prompt tokens of finished generations (as billed), by model and endpoint family (and team id, with per-team series on)",
    labelNames: ["model", "endpoint", "team"] as const, registers: [this.registry],
  });
  private readonly outputTokens = new Counter({
    name: "kiln_output_tokens_total", help: "Generated tokens (reasoning included, as billed), by model and endpoint family (and team id, with per-team series on)",
    labelNames: ["model", "endpoint", "team"] as const, registers: [this.registry],
  });
  private readonly tierCompleted = new Counter({
    name: "kiln_tier_completed_requests_total", help: "Generations that ran to completion, by model, endpoint family and service tier (default, flex, priority, batch)",
    labelNames: ["model", "endpoint", "tier"] as const, registers: [this.registry],
  });
  private readonly tierTokens = new Counter({
    name: "kiln_tier_tokens_total", help: "Tokens of finished generations (as billed), by model, service tier and kind (input, output)",
    labelNames: ["model", "tier", "kind"] as const, registers: [this.registry],
  });
  private readonly batchLines = new Counter({
    name: "kiln_batch_lines_total", help: "Batch lines that ended, by the batch's endpoint and outcome (done: answered; failed: its error is in the error file)",
    labelNames: ["endpoint", "outcome"] as const, registers: [this.registry],
  });
  private readonly ttft = new Histogram({
    name: "kiln_time_to_first_token_seconds", help: "From the start of a generation (prompt counted, then queued and prefilled) to its first output",
    labelNames: ["model", "endpoint"] as const, buckets: TTFT_BUCKETS, registers: [this.registry],
  });
  private readonly itl = new Histogram({
    name: "kiln_inter_token_latency_seconds", help: "Time between successive pieces of one choice's output",
    labelNames: ["model", "endpoint"] as const, buckets: ITL_BUCKETS, registers: [this.registry],
  });
  private readonly restarts = new Counter({
    name: "kiln_worker_restarts_total", help: "Inference workers replaced after they crashed, hung or failed, by model",
    labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly settlementFailures = new Counter({
    name: "kiln_settlement_failures_total", help: "Finished requests whose usage row and charge the database refused after every retry",
    registers: [this.registry],
  });
  private readonly settlementsJournaled = new Counter({
    name: "kiln_settlements_journaled_total", help: "Refused settlements kept in the settlement journal (data dir) until the database takes them",
    registers: [this.registry],
  });
  private readonly settlementsReplayedTotal = new Counter({
    name: "kiln_settlements_replayed_total", help: "Journaled settlements written to the database, at start-up or once it took writes again",
    registers: [this.registry],
  });
  private readonly fileUploads = new Counter({
    name: "kiln_file_uploads_total", help: "Files stored through POST /v1/files (refused and cut uploads are not counted)",
    registers: [this.registry],
  });
  private readonly fileUploadBytes = new Counter({
    name: "kiln_file_upload_bytes_total", help: "Bytes of the files stored through POST /v1/files",
    registers: [this.registry],
  });
  private readonly fileDeletes = new Counter({
    name: "kiln_file_deletes_total", help: "Files deleted through DELETE /v1/files/{id}",
    registers: [this.registry],
  });
  private readonly decodeSteps = new Counter({
    name: "kiln_decode_steps_total",
    help: "Decode passes of the inference workers, by what their batch held: rows=text (no media), media (only sequences with media) or mixed (both in one batch)",
    labelNames: ["rows"],
    registers: [this.registry],
  });
  private readonly imagesMade = new Counter({
    name: "kiln_images_total", help: "Images delivered by the images endpoints (generations and edits), by model and endpoint family",
    labelNames: ["model", "endpoint"] as const, registers: [this.registry],
  });
  private readonly imageStageSeconds = new Counter({
    name: "kiln_image_stage_seconds_total",
    help: "Image worker time spent on delivered images, by model and stage: text (text encoder), encode (VAE encoder, edits), denoise (UNet passes), decode (VAE decoder); a batched pass is shared by its rows",
    labelNames: ["model", "stage"] as const, registers: [this.registry],
  });
  private readonly cacheEvictions = new Counter({
    name: "kiln_prefix_cache_evictions_total", help: "Prefix-cache blocks the inference workers dropped to stay within their budget, by model",
    labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly cachePromptTokens = new Counter({
    name: "kiln_prefix_cache_prompt_tokens_total", help: "Prompt tokens of sequences that looked the prefix cache up, by model",
    labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly cacheHitTokens = new Counter({
    name: "kiln_prefix_cache_hit_tokens_total", help: "Of those prompt tokens, the ones whose KV came from the prefix cache, by model",
    labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly prefillTokens = new Counter({
    name: "kiln_prefill_tokens_total", help: "Prompt positions the inference workers ran through prefill passes (padding excluded, a cache hit's recomputed tail included), by model",
    labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly prefixCache = new PrefixCacheTally();
  private sources: RuntimeSources | null = null;

  constructor(opts: { processMetrics?: boolean; teamLabels?: boolean } = {}) {
    this.teamLabels = opts.teamLabels ?? false;
    // Read at scrape time, so they are always current and cost nothing between scrapes.
    const sources = () => this.sources;
    new Gauge({
      name: "kiln_queue_depth", help: "Generation sequences and image renders admitted and waiting for a worker slot, by model",
      labelNames: ["model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [model, n] of Object.entries(sources()?.queueDepth() ?? {})) this.set({ model }, n);
      },
    });
    new Gauge({
      name: "kiln_tier_queue_depth", help: "Generation sequences waiting for a worker slot, by model and service tier",
      labelNames: ["model", "tier"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const q of sources()?.queueDepthByTier?.() ?? []) this.set({ model: q.model, tier: q.tier }, q.depth);
      },
    });
    new Gauge({
      name: "kiln_model_device_info", help: "1 for the device (cpu, webgpu) and weight format each served model runs on",
      labelNames: ["model", "device", "weights"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const d of sources()?.devices?.() ?? []) this.set(d, 1);
      },
    });
    new Gauge({
      name: "kiln_worker_batch_size", help: "Sequences (or image renders) each worker holds now (its running batch)",
      labelNames: ["worker", "model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const w of sources()?.workers() ?? []) this.set({ worker: String(w.workerId), model: w.model }, w.held);
      },
    });
    new Gauge({
      name: "kiln_worker_resident_memory_bytes", help: "Resident memory each inference worker last reported",
      labelNames: ["worker", "model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const w of sources()?.workers() ?? []) this.set({ worker: String(w.workerId), model: w.model }, w.rssBytes);
      },
    });
    const cache = this.prefixCache;
    // A worker that exited or was replaced is no longer listed, so what it held stops counting.
    const heldNow = () => {
      const live = sources();
      return cache.held(live ? live.workers() : null);
    };
    new Gauge({
      name: "kiln_prefix_cache_blocks", help: "Prefix-cache blocks the model's live inference workers hold now",
      labelNames: ["model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [model, h] of heldNow()) this.set({ model }, h.blocks);
      },
    });
    new Gauge({
      name: "kiln_prefix_cache_bytes", help: "Bytes of the prefix-cache blocks the model's live inference workers hold now",
      labelNames: ["model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [model, h] of heldNow()) this.set({ model }, h.bytes);
      },
    });
    new Gauge({
      name: "kiln_prefix_cache_hit_ratio", help: "Prompt tokens read from the prefix cache over those that looked it up, since the server started (0 when none did), by model",
      labelNames: ["model"] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [model, ratio] of cache.hitRatios()) this.set({ model }, ratio);
      },
    });
    // Process and event-loop metrics under their usual names (process_*, nodejs_*), for the server only: they start timers.
    if (opts.processMetrics) {
      collectDefaultMetrics({ register: this.registry });
      // V8's per-space heap figures mean little on Bun's JavaScriptCore, and reading them took ~10 ms of the event loop
      // on every scrape (measured here), a stall every running stream would feel.
      for (const name of HEAP_SPACE_METRICS) this.registry.removeSingleMetric(name);
    }
  }

  /** Connects the scrape-time gauges to the running scheduler and workers. */
  watch(sources: RuntimeSources): void {
    this.sources = sources;
  }

  /** The workers as a scrape would see them now (the dashboard's Models tab); null in a process that runs none. */
  workersNow(): WorkerStat[] | null {
    return this.sources ? this.sources.workers() : null;
  }

  /** Workers replaced since this process started, by model (models with none are absent). */
  async restartsByModel(): Promise<Map<string, number>> {
    const { values } = await this.restarts.get();
    return new Map(values.map((v) => [String(v.labels.model), v.value]));
  }

  observeRequest(r: RequestObservation): void {
    const status = String(r.status);
    // A client may send any token as its method: only the standard ones become label values.
    const method = METHODS.has(r.method) ? r.method : "other";
    this.requests.inc({ method, route: r.route, status, ...this.team(r.team) });
    this.duration.observe({ method, route: r.route, status }, r.seconds);
    const reason = refusalReason(r.status);
    if (reason) this.refusals.inc({ reason, ...this.team(r.team) });
  }

  observeUsage(labels: { model: string; endpoint: string; team: string }, usage: { inputTokens: number; outputTokens: number }): void {
    const series = { model: labels.model, endpoint: labels.endpoint, ...this.team(labels.team) };
    this.inputTokens.inc(series, usage.inputTokens);
    this.outputTokens.inc(series, usage.outputTokens);
  }

  /** A settled generation in its service tier: its tokens, and the request when it ran to completion. */
  observeSettled(labels: { model: string; endpoint: string; tier: string }, status: string, usage: { inputTokens: number; outputTokens: number }): void {
    if (status === "completed") this.tierCompleted.inc(labels);
    this.tierTokens.inc({ model: labels.model, tier: labels.tier, kind: "input" }, usage.inputTokens);
    this.tierTokens.inc({ model: labels.model, tier: labels.tier, kind: "output" }, usage.outputTokens);
  }

  /** A batch line ended (written once: a line put back and run again counts when it ends). */
  batchLineEnded(endpoint: string, outcome: "done" | "failed"): void {
    this.batchLines.inc({ endpoint, outcome });
  }

  /** A settlement the database refused after every retry; `journaled`: kept in the journal for a replay (else only logged). */
  settlementFailed(journaled: boolean): void {
    this.settlementFailures.inc();
    if (journaled) this.settlementsJournaled.inc();
  }

  settlementsReplayed(n: number): void {
    this.settlementsReplayedTotal.inc(n);
  }

  /** The team label, when per-team series are on. */
  private team(team: string): { team?: string } {
    return this.teamLabels ? { team } : {};
  }

  fileUploaded(bytes: number): void {
    this.fileUploads.inc();
    this.fileUploadBytes.inc(bytes);
  }

  fileDeleted(): void {
    this.fileDeletes.inc();
  }

  observeFirstToken(labels: { model: string; endpoint: string }, seconds: number): void {
    this.ttft.observe(labels, seconds);
  }

  observeInterToken(labels: { model: string; endpoint: string }, seconds: number): void {
    this.itl.observe(labels, seconds);
  }

  /** One decode pass: how many of its rows carry media and how many do not. */
  observeDecodeBatch(batch: { media: number; text: number }): void {
    if (batch.media + batch.text === 0) return;
    this.decodeSteps.inc({ rows: batch.media === 0 ? "text" : batch.text === 0 ? "media" : "mixed" });
  }

  /** Images one request delivered, and the worker time each took by stage. */
  observeImages(model: string, endpoint: string, images: { timings: { textMs: number; encodeMs: number; denoiseMs: number; decodeMs: number } }[]): void {
    this.imagesMade.inc({ model, endpoint }, images.length);
    for (const { timings: t } of images) {
      for (const [stage, ms] of [["text", t.textMs], ["encode", t.encodeMs], ["denoise", t.denoiseMs], ["decode", t.decodeMs]] as const) {
        this.imageStageSeconds.inc({ model, stage }, ms / 1000);
      }
    }
  }

  /** A worker's prefix-cache figures (cumulative over its life): the counters take what they grew by since its last report. */
  observePrefixCache(workerId: number, model: string, stats: PrefixCacheStats): void {
    const d = this.prefixCache.record(workerId, model, stats);
    this.cacheEvictions.inc({ model }, d.evictions);
    this.cachePromptTokens.inc({ model }, d.promptTokens);
    this.cacheHitTokens.inc({ model }, d.hitTokens);
    this.prefillTokens.inc({ model }, d.prefillTokens);
  }

  workerRestarted(model: string): void {
    this.restarts.inc({ model });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
