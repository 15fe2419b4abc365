// Generation requests a model has coming: admitted by the server and being prepared (media read, prompt rendered and
// tokenized) but not yet handed to a worker. Requests a client sends together reach the worker a few ms apart, as the
// main thread prepares them one by one; a worker told that more are coming waits for them before its first prefill
// (workers/text/burst.ts), so the burst shares one pass instead of splitting into two.

export class Admissions {
  private readonly counts = new Map<string, number>();

  /** A request for `model` starts being prepared; the returned function ends it (calling it again does nothing). */
  begin(model: string): () => void {
    this.counts.set(model, (this.counts.get(model) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.counts.get(model) ?? 1) - 1;
      if (left > 0) this.counts.set(model, left);
      else this.counts.delete(model);
    };
  }

  /** How many requests for `model` are being prepared now. */
  pending(model: string): number {
    return this.counts.get(model) ?? 0;
  }
}
