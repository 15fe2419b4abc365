// The batch bench's background load: lines sent through the batch lane a few at a time, counted as they complete.
// Until the Batch API lands the lines are flex requests (flex shares the batch lane); a real batch can take its place
// behind the same interface (start it, count its completed lines, cancel it).

export interface LaneLoadOptions {
  url: string;
  key: string;
  model: string;
  /** The next line's user message (a fresh prompt each). */
  prompt: () => string;
  lines: number;
  /** Output tokens of each line (ignore_eos, so every line makes exactly this many). */
  maxTokens: number;
  /** Lines in flight at once (a batch runner's parallelism). */
  inflight: number;
}

export interface LaneLoad {
  /** Lines completed so far, each with when it completed (performance.now()). */
  completedAt: number[];
  /** Resolves once every line has ended, or the load was stopped and its lines in flight were aborted. */
  done: Promise<void>;
  /** Sends no more lines and aborts those in flight. */
  stop(): void;
}

export type StartLaneLoad = (o: LaneLoadOptions) => LaneLoad;

/** The load as flex chat completions, `inflight` at a time; a line that fails fails the bench (nothing is dropped silently). */
export const flexLines: StartLaneLoad = (o) => {
  const abort = new AbortController();
  const completedAt: number[] = [];
  let sent = 0;
  const worker = async () => {
    while (sent < o.lines && !abort.signal.aborted) {
      sent++;
      try {
        const res = await fetch(`${o.url}/v1/chat/completions`, {
          method: "POST",
          signal: abort.signal,
          headers: { authorization: `Bearer ${o.key}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: o.model, messages: [{ role: "user", content: o.prompt() }], max_tokens: o.maxTokens, temperature: 0, ignore_eos: true, service_tier: "flex",
          }),
        });
        const body = (await res.json()) as { usage?: { completion_tokens: number } };
        if (res.status !== 200 || body.usage?.completion_tokens !== o.maxTokens) throw new Error(`a batch-lane line failed: HTTP ${res.status} ${JSON.stringify(body)}`);
        completedAt.push(performance.now());
      } catch (e) {
        // A line the bench stopped ends quietly; any other failure fails the bench.
        if (abort.signal.aborted) return;
        throw e;
      }
    }
  };
  const done = Promise.all(Array.from({ length: o.inflight }, worker)).then(() => {});
  return { completedAt, done, stop: () => abort.abort() };
};
