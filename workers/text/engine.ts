// The continuous-batching step loop: admits queued sequences at step boundaries, decodes the batch, retires finished rows.
// Interactive sequences go first; background ones (flex, batch) fill the rows left and pause for them (paused-rows.ts).
import type { ServiceTier } from "../../src/inference/service-tier.ts";
import { isBackground, laneInsertAt, rowsToResume } from "../../src/protocol/lanes.ts";
import type { MediaInput, PrefixScope, SamplingParams, SeqDelta, SeqFinish } from "../../src/protocol/text.ts";
import { chunkInputs, decodeInputs, extendInputs, type FeatureRows, prefillInputs, withFeatures } from "./batch-inputs.ts";
import { chunkWidth } from "./chunk-width.ts";
import { arrangeHost, type BatchKv, type BatchRow } from "./kv-cache.ts";
import { forwardMasked, tryForward } from "./forward-guard.ts";
import type { CacheOps, ForwardResult, ModelRunner } from "./model-runner.ts";
import { releaseLogits, releaseReplacedKv } from "./release-buffer.ts";
import { RowSampler } from "./row-sampler.ts";
import { Sequence } from "./sequence.ts";
import { addRefusal } from "./validate.ts";
import { type BackgroundPace, interactiveFills, interactiveLive, interactiveWaiting, keepsFinishedKv, laneBudget, rowsToYield, scoresPrompt } from "./lane-choice.ts";
import type { EngineOptions } from "./engine-options.ts";
import { LanePace, REAL_CLOCK } from "./lane-pace.ts";
import { admitPrompts } from "./admit-prompts.ts";
import { PausedRows } from "./paused-rows.ts";
import { PrefixReuse } from "./prefix-reuse.ts";
import { promptEntries, scoringWidth } from "./prompt-logprobs.ts";

/** What one step gathers: the report, and the rows that form the next batch. */
interface StepContext {
  deltas: SeqDelta[];
  finished: SeqFinish[];
  keep: BatchRow<unknown>[];
  next: Sequence[];
  /** The caches this step's passes made: one whose rows all finished at once is let go with the batch it would have joined. */
  passed: BatchKv<unknown>[];
}

/** A long prompt being prefilled chunk by chunk; it holds a batch slot meanwhile. */
interface Chunked {
  seq: Sequence;
  kv: BatchKv<unknown> | null;
  done: number;
}

export class Engine {
  private running: Sequence[] = [];
  /** Row r of kv belongs to running[r]. */
  private kv: BatchKv<unknown> | null = null;
  private queue: Sequence[] = [];
  private pendingFinished: SeqFinish[] = [];
  private chunked: Chunked | null = null;
  /** Sequences the step under way took on (admitted, or done with the chunked lane) until they join the batch. */
  private inStep: Sequence[] = [];
  private readonly known = new Set<string>();
  /** Background rows out of the batch until rows allow them back. */
  private readonly paused: PausedRows;
  private readonly rowSampler: RowSampler;
  private readonly lanePace: LanePace;
  /**
   * What the last step ran, for profiles and the step's batch record: rows decoded (of which with media), prompt
   * tokens prefilled (padding included), and ms spent in media encoders.
   */
  readonly lastStep = { decodeRows: 0, mediaRows: 0, prefillTokens: 0, encodeMs: 0 };

  /** The runner's cache arrangement (on its device), or the host's. */
  private readonly cache: CacheOps<unknown>;
  /** Prefix reuse: host caches only (a device runner's KV stays on its device). */
  readonly prefix: PrefixReuse;

  constructor(private readonly runner: ModelRunner<unknown>, private readonly opts: EngineOptions) {
    this.rowSampler = new RowSampler(runner.maxContext, opts.tokenBytes);
    // A host cache is rebuilt with room for the whole batch (later joins are copied into its spare rows) and, for a
    // runner that writes new columns in place, spare columns (the next pass does not copy it again to grow it).
    const room = { rows: opts.maxBatch, spareColumns: runner.spareColumns === true };
    this.cache = runner.cache ?? { arrange: async (rows) => arrangeHost(rows as BatchRow[], room) };
    // A cache the host cannot read in place (a device's) is cached only through the runner's readColumns.
    this.prefix = opts.prefix && (!runner.cache || runner.readColumns) ? opts.prefix : new PrefixReuse(null, "");
    this.paused = new PausedRows(runner.cache);
    this.lanePace = new LanePace(opts.clock ?? REAL_CLOCK, opts.takeArrivals);
  }

  /** `lane`: where it queues (interactive lanes first) and whether it yields its row to interactive work. */
  add(seqId: string, promptIds: number[], params: SamplingParams, media?: MediaInput[], prefix?: PrefixScope, lane?: ServiceTier): void {
    const problem = addRefusal(seqId, this.known, promptIds, params, media, {
      vocabSize: this.runner.vocabSize, maxContext: this.runner.maxContext, constrainable: this.opts.constraints !== undefined,
      allPositions: this.runner.allPositions === true, mediaTokenIds: this.runner.media?.tokenIds,
    });
    if (problem !== null) {
      const promptTokens = Array.isArray(promptIds) ? promptIds.length : 0;
      this.pendingFinished.push({ seqId: String(seqId), reason: "error", promptTokens, outputTokens: 0, message: problem });
      return;
    }
    this.known.add(seqId);
    const seq = new Sequence(seqId, promptIds, params, this.opts.tokenBytes, this.opts.constraints, media);
    seq.prefix = this.prefix.open(promptIds, media ?? [], prefix);
    seq.lane = lane;
    this.queue.splice(laneInsertAt(this.queue, lane, (s) => s.lane), 0, seq);
    if (!seq.media.ready) this.prepareMedia(seq);
  }

  /** Preprocesses a queued sequence's media off the step; it is admitted once ready, or ends alone if that fails. */
  private prepareMedia(seq: Sequence): void {
    seq.media.prepare(this.runner.media!).then(
      () => this.opts.wake?.(),
      (err: unknown) => {
        const i = this.queue.indexOf(seq);
        // Cancelled while preprocessing: it has already been reported.
        if (i < 0) return;
        this.queue.splice(i, 1);
        this.pendingFinished.push(seq.finish("error", { message: err instanceof Error ? err.message : "media could not be preprocessed" }));
        this.opts.wake?.();
      },
    );
  }

  /** A queued sequence ends at once; a running one leaves at the next step boundary. Unknown ids are ignored. */
  cancel(seqId: string): void {
    const i = this.queue.findIndex((s) => s.id === seqId);
    if (i >= 0) {
      const [seq] = this.queue.splice(i, 1);
      this.known.delete(seqId);
      this.pendingFinished.push(seq!.finish("cancelled"));
      return;
    }
    // While a step runs, a sequence admitted by it, or whose long prompt's last chunk it just prefilled, is in none of
    // the lists (only in the step's own): it is marked there too, and leaves at the next boundary.
    const running =
      this.running.find((s) => s.id === seqId) ??
      (this.chunked?.seq.id === seqId ? this.chunked.seq : undefined) ??
      this.inStep.find((s) => s.id === seqId) ??
      this.paused.find(seqId);
    if (running) running.cancelled = true;
  }

  get maxBatch(): number {
    return this.opts.maxBatch;
  }

  /** Whether a step would do something now (queued sequences still preprocessing media do not count: wake says when). */
  hasWork(): boolean {
    return this.running.length > 0 || this.chunked !== null || this.paused.length > 0 || this.pendingFinished.length > 0 || this.queue.some((s) => s.media.ready);
  }

  /** Queued sequences whose media are still being preprocessed (not yet admissible). */
  preparing(): number {
    return this.queue.filter((s) => !s.media.ready).length;
  }

  counts(): { active: number; queued: number; interactiveQueued: number; background: boolean } {
    const active = this.running.length + (this.chunked ? 1 : 0) + this.paused.length;
    return { active, queued: this.queue.length, interactiveQueued: interactiveWaiting(this.queue), background: this.paused.length > 0 || this.running.some((r) => isBackground(r.lane)) };
  }

  /** One engine step: decode the running batch, prefill newcomers into freed slots, rebuild the cache once, report. */
  async step(): Promise<void> {
    const ctx: StepContext = { deltas: [], finished: this.pendingFinished, keep: [], next: [], passed: [] };
    this.pendingFinished = [];
    const budget = this.opts.prefillTokenBudget ?? 512;
    await this.dropCancelled(ctx.finished);
    const pace = await this.lanePace.pace(interactiveLive(this.queue, this.running, this.chunked?.seq ?? null), this.running.length + this.paused.length === 0 && !this.chunked);
    const filling = interactiveFills(this.queue, this.running, this.chunked?.seq ?? null, this.prefix, budget);
    const live = await this.yieldRows(filling);
    const decoding = live.length > 0 && this.kv !== null;
    Object.assign(this.lastStep, { decodeRows: decoding ? live.length : 0, mediaRows: decoding ? live.filter((s) => s.media.carries).length : 0, prefillTokens: 0, encodeMs: 0 });
    if (live.length > 0 && this.kv) {
      const kv = this.kv;
      const tokens = live.map((s) => s.lastToken);
      const out = await forwardMasked(live, ctx.finished, () => this.runner.forward(decodeInputs(tokens, kv.lens, kv.length), kv));
      if (out) live.forEach((s, r) => this.prefix.fed(s.prefix, tokens[r]!));
      if (out) this.collect(ctx, live, { tensors: out.present, lens: kv.lens.map((l) => l + 1), length: kv.length + 1 }, out);
    }
    // New background work waits for both, and for an interactive request that arrived during the decode pass.
    const arrived = () => this.lanePace.arrived(live.some((s) => isBackground(s.lane)), () => interactiveWaiting(this.queue));
    const backgroundWaits = filling || this.paused.length > 0 || pace === "hold" || (await arrived());
    if (!this.chunked && this.opts.maxBatch - ctx.next.length > 0) this.takeLongPrompt(budget, backgroundWaits, pace);
    const spent = this.chunked && !(filling && isBackground(this.chunked.seq.lane)) ? await this.advanceChunk(ctx, laneBudget(this.chunked.seq, budget, pace)) : 0;
    const free = this.opts.maxBatch - ctx.next.length - (this.chunked ? 1 : 0);
    const admitted = admitPrompts(this.queue, this.prefix, { free, budget, spent, backgroundWaits, pace, oneRowPast: this.runner.oneRowPast === true });
    this.inStep = [...ctx.next, ...admitted];
    await this.prefillNewcomers(admitted, ctx);
    for (const s of admitted) this.prefix.markPending(s.prefix, -1);
    this.resumePaused(ctx);
    for (const f of ctx.finished) this.known.delete(f.seqId);
    const { decodeRows, mediaRows } = this.lastStep;
    const batch = decodeRows > 0 ? { media: mediaRows, text: decodeRows - mediaRows } : undefined;
    // Reported before the next batch is arranged (a join copies every row's KV): first tokens go out without that wait.
    if (ctx.deltas.length > 0 || ctx.finished.length > 0) this.opts.emit(ctx.deltas, ctx.finished, batch);
    // The prefix cache copies what this step's passes computed after its tokens went out, before the batch moves on.
    await this.prefix.flush();
    await this.setBatch(ctx.keep, ctx.next, ctx.passed);
    this.inStep = [];
  }

  /** Takes background rows out of the batch before its decode pass (lane-choice.ts says which); returns the rows that decode. */
  private async yieldRows(filling: boolean): Promise<Sequence[]> {
    const kv = this.kv;
    const free = this.opts.maxBatch - this.running.length - (this.chunked ? 1 : 0);
    const picked = kv ? rowsToYield(this.running, filling, free, interactiveWaiting(this.queue)) : [];
    if (!kv || picked.length === 0) return this.running;
    await this.paused.pause(kv, this.running, picked, this.chunked?.kv ? [this.chunked.kv] : []);
    const stay = this.running.flatMap((seq, row) => (picked.includes(row) ? [] : [{ seq, row }]));
    await this.setBatch(stay.map(({ row }) => ({ kv, row })), stay.map((k) => k.seq));
    return this.running;
  }

  /** Paused rows rejoin the next batch in the rows left, less those the interactive sequences still queued will need. */
  private resumePaused(ctx: StepContext): void {
    if (this.paused.length === 0) return;
    const free = this.opts.maxBatch - ctx.next.length - (this.chunked ? 1 : 0);
    const { seqs, rows } = this.paused.resume(rowsToResume(this.paused.length, free, interactiveWaiting(this.queue)));
    ctx.keep.push(...rows);
    ctx.next.push(...seqs);
    this.inStep.push(...seqs);
  }

  /**
   * Prefills the admitted prompts in one pass. Each row's new tokens are the last `width` of its prompt (width: the most
   * any row has left after its cached prefix), the positions before them come from the cache: a row that found more
   * recomputes a few cached positions in columns it would otherwise pad. Rows shorter than the width are left-padded.
   */
  private async prefillNewcomers(admitted: Sequence[], ctx: StepContext): Promise<void> {
    if (admitted.length === 0) return;
    const width = Math.max(...admitted.map((s) => s.promptIds.length - (s.prefix?.hit?.length ?? 0)));
    const newcomers: Sequence[] = [];
    for (const seq of admitted) {
      seq.cached = Math.max(0, seq.promptIds.length - width);
      if (await this.encodeMedia(seq, seq.cached, seq.promptIds.length, ctx)) newcomers.push(seq);
    }
    if (newcomers.length === 0) return;
    const pastLens = newcomers.map((s) => s.cached);
    const pastLen = Math.max(...pastLens);
    const rows = newcomers.map((s) => ({ tokens: s.promptIds.slice(s.cached), past: s.cached }));
    const passWidth = Math.max(...rows.map((r) => r.tokens.length));
    // A runner that writes new columns in place gets them in the past as it is built, rather than a grown copy of it.
    const past = this.prefix.past(newcomers.map((s) => s.prefix), pastLens, this.runner.spareColumns && !this.runner.cache ? passWidth : 0);
    this.lastStep.prefillTokens += newcomers.length * passWidth;
    for (const s of newcomers) this.prefix.admitted(s.prefix, s.promptIds.length);
    const inputs = past ? extendInputs(rows, pastLen, this.runner.padId) : prefillInputs(rows.map((r) => r.tokens), this.runner.padId);
    // Left padding puts row r's first new position in column passWidth − its new tokens.
    const features = newcomers.map((s, r) => this.featureRows(s, r, s.cached, rows[r]!.tokens.length, passWidth - rows[r]!.tokens.length));
    const out = await forwardMasked(newcomers, ctx.finished, () => this.runner.forward(withFeatures(inputs, features), past));
    for (const s of newcomers) s.media.release();
    if (!out) return;
    this.releasePast(past, out);
    const kv: BatchKv<unknown> = { tensors: out.present, lens: newcomers.map((s) => s.promptIds.length), length: pastLen + passWidth };
    newcomers.forEach((s, r) => {
      this.prefix.prefilled(rows[r]!.tokens.length);
      this.prefix.record(s.prefix, kv as BatchKv, r);
    });
    this.collect(ctx, newcomers, kv, out);
  }

  /** Runs the encoders of a sequence's media over prompt positions [from, to) (timed); false if it failed and ended. */
  private async encodeMedia(seq: Sequence, from: number, to: number, ctx: StepContext): Promise<boolean> {
    if (!seq.media.carries) return true;
    const started = performance.now();
    try {
      await seq.media.encode(this.runner.media!, from, to);
      return true;
    } catch (err) {
      ctx.finished.push(seq.finish("error", { message: err instanceof Error ? err.message : "media encoding failed" }));
      return false;
    } finally {
      this.lastStep.encodeMs += performance.now() - started;
    }
  }

  /** A sequence's feature rows over prompt positions [start, start + length), as row `row` with position start in column `col0`. */
  private featureRows(seq: Sequence, row: number, start: number, length: number, col0: number): FeatureRows[] {
    return seq.media.carries ? seq.media.rows(row, start, length, col0, this.runner.media!.hidden) : [];
  }

  /** Samples each row's next token, then frees the logits; rows that go on are kept (from `kv`) for the next batch. */
  private collect(ctx: StepContext, seqs: Sequence[], kv: BatchKv<unknown>, out: ForwardResult<unknown>): void {
    ctx.passed.push(kv);
    seqs.forEach((seq, row) => {
      const outcome = this.rowSampler.next(seq, out.logits.subarray(row * out.vocab, (row + 1) * out.vocab));
      ctx.deltas.push({ seqId: seq.id, text: outcome.text, tokens: outcome.tokens, ...(outcome.logprob ? { logprobs: [outcome.logprob] } : {}) });
      // A finished sequence's whole KV (prompt and what it decoded) stays as a prefix for the next turn (lane-choice.ts).
      if (outcome.finish && outcome.finish.reason !== "error" && keepsFinishedKv(seq.lane)) this.prefix.record(seq.prefix, kv as BatchKv, row);
      if (outcome.finish) ctx.finished.push(outcome.finish);
      else {
        ctx.keep.push({ kv, row });
        ctx.next.push(seq);
      }
    });
    releaseLogits(out);
  }

  /** Prefills the next chunk of the long prompt; after its last chunk the sequence samples and joins. Returns tokens spent. */
  private async advanceChunk(ctx: StepContext, budget: number): Promise<number> {
    const { seq, kv, done } = this.chunked!;
    const scoring = scoresPrompt(seq);
    const width = scoring ? scoringWidth(chunkWidth(budget, done), this.runner.vocabSize) : chunkWidth(budget, done);
    const piece = seq.promptIds.slice(done, done + width);
    if (!(await this.encodeMedia(seq, done, done + piece.length, ctx))) {
      this.endChunked();
      return 0;
    }
    this.lastStep.prefillTokens += piece.length;
    const last = done + piece.length >= seq.promptIds.length;
    const inputs = { ...withFeatures(chunkInputs(piece, done), [this.featureRows(seq, 0, done, piece.length, 0)]), ...(scoring ? { allLogits: true } : {}) };
    const run = () => this.runner.forward(inputs, kv);
    const out = await (last ? forwardMasked([seq], ctx.finished, run) : tryForward([seq], ctx.finished, run));
    this.endChunked();
    if (out) {
      this.releasePast(kv, out);
      const cached = done + piece.length;
      const present: BatchKv<unknown> = { tensors: out.present, lens: [cached], length: cached };
      this.prefix.prefilled(piece.length);
      this.prefix.record(seq.prefix, present as BatchKv, 0);
      if (scoring) this.reportPromptLogprobs(ctx, seq, out, done, piece.length);
      if (cached < seq.promptIds.length) this.startChunked({ seq, kv: present, done: cached });
      else {
        seq.media.release();
        // A prompt scored with nothing to generate (max_tokens 0 with echo) ends here, its KV recorded above.
        if (seq.params.maxTokens === 0) ctx.finished.push(seq.finish("length"));
        else this.collect(ctx, [seq], present, out);
      }
    }
    // Read (scored, or sampled by collect): a chunk's logits go now.
    releaseLogits(out);
    return piece.length;
  }

  /** The prompt entries a scoring chunk over positions [from, from + n) yields, as a delta of no tokens. */
  private reportPromptLogprobs(ctx: StepContext, seq: Sequence, out: ForwardResult<unknown>, from: number, n: number): void {
    const entries = promptEntries(out.positions!, out.vocab, seq.promptIds, from, n, seq.params.promptLogprobs!, this.opts.tokenBytes);
    ctx.deltas.push({ seqId: seq.id, text: "", tokens: 0, promptLogprobs: entries });
  }

  /** A prefill's own past (the prefix cache's copy, or the chunk before) once the pass has made its cache from it. */
  private releasePast(past: BatchKv<unknown> | null, out: ForwardResult<unknown>): void {
    if (!this.runner.cache) releaseReplacedKv([past], [{ tensors: out.present }]);
  }

  /**
   * Makes `rows` (row i runs seqs[i]) the batch, arranged by the runner's cache (which may reorder the rows); `passed`:
   * caches of this step's passes, let go unless the batch keeps them.
   */
  private async setBatch(rows: BatchRow<unknown>[], seqs: Sequence[], passed: BatchKv<unknown>[] = []): Promise<void> {
    const retained = [...(this.chunked?.kv ? [this.chunked.kv] : []), ...this.paused.kvs()];
    const before = this.kv;
    const { kv, order } = await this.cache.arrange(rows, retained);
    this.kv = kv;
    this.running = order.map((i) => seqs[i]!);
    // A host cache the new batch no longer uses (the former batch after a join, a newcomer's prefill) is freed now; a
    // device runner's cache frees its own (DeviceCache.sweep).
    if (!this.runner.cache) releaseReplacedKv([before, ...rows.map((r) => r.kv), ...passed], [kv, ...retained]);
  }

  /** Removes cancelled rows and returns the sequences still decoding. */
  private async dropCancelled(finished: SeqFinish[]): Promise<Sequence[]> {
    for (const seq of this.paused.dropCancelled()) finished.push(seq.finish("cancelled"));
    if (this.chunked?.seq.cancelled) {
      finished.push(this.chunked.seq.finish("cancelled"));
      this.endChunked();
    }
    if (!this.running.some((s) => s.cancelled) || !this.kv) return this.running;
    const kv = this.kv;
    const rows: BatchRow<unknown>[] = [];
    const live: Sequence[] = [];
    this.running.forEach((seq, row) => {
      if (seq.cancelled) finished.push(seq.finish("cancelled"));
      else {
        rows.push({ kv, row });
        live.push(seq);
      }
    });
    await this.setBatch(rows, live);
    return this.running;
  }

  /**
   * Takes the first queued prompt whose uncached part is too long for one step's prefill budget, if any, with its
   * cached prefix as the past of its first chunk. One whose next block another prefill is computing waits for it.
   */
  private takeLongPrompt(budget: number, backgroundWaits: boolean, pace: BackgroundPace): void {
    const i = this.queue.findIndex((s) => {
      if (!s.media.ready || (backgroundWaits && isBackground(s.lane))) return false;
      if (scoresPrompt(s)) return true;
      if (s.promptIds.length <= laneBudget(s, budget, pace)) return false; // never long, cached or not: no lookup
      const usable = this.prefix.usable(s.prefix, s.promptIds.length, true);
      return s.promptIds.length - usable > laneBudget(s, budget, pace) && !this.prefix.waitsForPending(s.prefix, usable);
    });
    if (i < 0) return;
    const seq = this.queue.splice(i, 1)[0]!;
    // A prompt being scored never reads the cache (a cached prefix has no logits), so it has no hit; it still records.
    seq.cached = seq.prefix?.hit?.length ?? 0;
    const kv = this.prefix.past([seq.prefix], [seq.cached]) as BatchKv<unknown> | null;
    this.prefix.admitted(seq.prefix, seq.promptIds.length);
    this.startChunked({ seq, kv, done: seq.cached });
  }

  /** A long prompt enters the chunked lane: sequences sharing its blocks wait for them meanwhile. */
  private startChunked(c: Chunked): void {
    this.chunked = c;
    this.prefix.markPending(c.seq.prefix, 1);
  }

  private endChunked(): void {
    if (this.chunked) this.prefix.markPending(this.chunked.seq.prefix, -1);
    this.chunked = null;
  }
}
