// The batch bench's background load, counted line by line as it completes: a real batch (the JSONL file uploaded, the
// batch created through /v1/batches, its request counts polled, cancelled when the bench stops it), or the same lines
// as flex requests, which share the batch lane, sent a few at a time by the bench itself.

export interface LaneLoadOptions {
  url: string;
  key: string;
  model: string;
  /** The next line's user message (a fresh prompt each). */
  prompt: () => string;
  lines: number;
  /** Output tokens of each line (ignore_eos, so every line makes exactly this many). */
  maxTokens: number;
  /** Lines in flight at once (the flex load's; a real batch runs as many as the server's batch runner does). */
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

/** How often a real batch's request counts are read: its completion times are known to this resolution. */
const POLL_MS = 100;

/**
 * The load as one real batch of chat lines: uploaded with purpose "batch", created with completion_window 24h, its
 * completed count polled (each newly completed line stamped with the poll's time); a failed line, or the batch ending
 * otherwise than completed before the bench stops it, fails the bench. stop() cancels it.
 */
export const batchLines: StartLaneLoad = (o) => {
  const completedAt: number[] = [];
  let stopped = false;
  let batchId: string | null = null;
  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${o.url}${path}`, { ...init, headers: { authorization: `Bearer ${o.key}`, ...(init.headers ?? {}) } });
    const body = (await res.json()) as T;
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const run = async () => {
    const jsonl = Array.from({ length: o.lines }, (_, i) => JSON.stringify({
      custom_id: `line-${i}`, method: "POST", url: "/v1/chat/completions",
      body: { model: o.model, messages: [{ role: "user", content: o.prompt() }], max_tokens: o.maxTokens, temperature: 0, ignore_eos: true },
    })).join("\n");
    const form = new FormData();
    form.append("purpose", "batch");
    form.append("file", new Blob([jsonl], { type: "application/jsonl" }), "bench-batch.jsonl");
    const file = await api<{ id: string }>("/v1/files", { method: "POST", body: form });
    const batch = await api<{ id: string }>("/v1/batches", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }) });
    batchId = batch.id;
    for (;;) {
      const b = await api<{ status: string; errors: unknown; request_counts: { completed: number; failed: number } }>(`/v1/batches/${batchId}`);
      const counts = b.request_counts;
      const now = performance.now();
      while (completedAt.length < counts.completed) completedAt.push(now);
      if (counts.failed > 0) throw new Error(`batch ${batchId}: ${counts.failed} line(s) failed`);
      if (["completed", "failed", "expired", "cancelled"].includes(b.status)) {
        if (b.status !== "completed" && !stopped) throw new Error(`batch ${batchId} ended ${b.status}: ${JSON.stringify(b.errors)}`);
        return;
      }
      if (stopped) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  const done = run();
  return {
    completedAt,
    done,
    stop: () => {
      stopped = true;
      if (batchId) void api<unknown>(`/v1/batches/${batchId}/cancel`, { method: "POST" }).catch(() => {});
    },
  };
};
