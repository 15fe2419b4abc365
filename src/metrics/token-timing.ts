// Times one choice's output for the TTFT and inter-token latency histograms: the first piece of output is measured
// from the start of the run, each later one from the piece before it.

export interface TokenTimingSink {
  observeFirstToken(labels: { model: string; endpoint: string }, seconds: number): void;
  observeInterToken(labels: { model: string; endpoint: string }, seconds: number): void;
}

export class TokenTiming {
  private last: number | null = null;

  constructor(
    private readonly sink: TokenTimingSink,
    private readonly labels: { model: string; endpoint: string },
    private readonly startedAt: number,
  ) {}

  /** A piece of output arrived at `now` (performance.now() milliseconds). */
  output(now: number): void {
    if (this.last === null) this.sink.observeFirstToken(this.labels, (now - this.startedAt) / 1000);
    else this.sink.observeInterToken(this.labels, (now - this.last) / 1000);
    this.last = now;
  }
}
