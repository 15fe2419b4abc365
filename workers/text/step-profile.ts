// Per-step timings of a worker's loop, for `npm run bench -- --profile`: where one step's time goes inside the worker
// (ONNX Runtime's run, the engine's own host work, posting the step's message, the loop's turn between steps).
// Off unless KILN_PROFILE_FILE names a file; records are appended as JSON lines whenever the loop goes idle, and every
// few hundred steps under a load that never lets it (a running batch).
import { appendFileSync } from "node:fs";

export interface StepRecord {
  /** Rows decoded this step (sequences that already had a token). */
  decodeRows: number;
  /** Of decodeRows, the rows whose sequence carries images or audio (absent in records of older kilns). */
  mediaRows?: number;
  /** Prompt tokens prefilled this step (padding included). */
  prefillTokens: number;
  /** Inside session.run, summed over the step's passes (media encoders and embed_tokens included). */
  runMs: number;
  /** Running media encoders at prefill (part of runMs; absent in records of older kilns). */
  encodeMs?: number;
  /** engine.step() wall time: run + building inputs, reshaping the cache, sampling, detokenizing. */
  stepMs: number;
  /** postMessage of the step's report (structured clone onto the main thread's queue). */
  postMs: number;
  /** From the end of this step to the start of the next: the loop's yield to events (adds, cancels, pings). */
  gapMs: number;
  /** When the step ended, in ms since the epoch, to line steps up with what clients saw (absent in records of older kilns). */
  at?: number;
}

/** Records kept before they are written though the loop never went idle (the step under way stays, for its gap). */
const FLUSH_EVERY = 256;

/** Collects step records and appends them to a file in batches, outside the steps. */
export class StepProfiler {
  private records: StepRecord[] = [];
  private open: StepRecord | null = null;
  private endedAt = 0;
  /** Posting time of the step under way (its report is posted before the step returns). */
  private postMs = 0;

  constructor(
    private readonly file: string,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /** Starts a step; the gap since the previous one is charged to that one (none after an idle period). */
  begin(now: number): void {
    if (this.open && this.endedAt > 0) this.open.gapMs = now - this.endedAt;
    this.open = null;
  }

  /** Ends a step with its figures and the posting time addPost charged to it. */
  end(now: number, rec: Omit<StepRecord, "gapMs" | "postMs" | "at">): void {
    this.open = { ...rec, postMs: this.postMs, gapMs: 0, at: this.wallClock() };
    this.postMs = 0;
    this.records.push(this.open);
    this.endedAt = now;
    if (this.records.length > FLUSH_EVERY) this.write(this.records.splice(0, this.records.length - 1));
  }

  /** Time spent posting a report during the step under way. */
  addPost(ms: number): void {
    this.postMs += ms;
  }

  /** The loop went idle: the last step has no gap; records so far go to the file. */
  flush(): void {
    this.open = null;
    this.endedAt = 0;
    this.write(this.records);
    this.records = [];
  }

  private write(records: StepRecord[]): void {
    if (records.length) appendFileSync(this.file, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  }
}

/** The profiler the environment asks for, or null. */
export function profilerFromEnv(env: Record<string, string | undefined> = process.env): StepProfiler | null {
  const file = env.KILN_PROFILE_FILE;
  return file ? new StepProfiler(file) : null;
}
