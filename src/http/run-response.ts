// How every family answers with a run of the core: as an SSE stream through the one writer (client gone → abort,
// encoder crash → logged, sanitized frame), or by consuming the run to its end for a JSON answer (504 past the limit).
import { ApiError } from "../errors/api-error.ts";
import type { CoreEvent } from "../inference/blocks.ts";
import type { Run } from "../inference/text-run.ts";
import type { Logger } from "../log/logger.ts";
import { type SseFrame, sseResponse, type StreamEnd } from "./sse-writer.ts";

export interface StreamOptions {
  frames: AsyncGenerator<SseFrame, StreamEnd | void>;
  /** The family's frame for a sanitized internal error. */
  errorFrame: (err: ApiError) => SseFrame;
  heartbeatMs?: number;
  heartbeat?: SseFrame;
  logger: Logger;
  requestId: string;
  onStreamEnd?: (end: StreamEnd) => void;
}

export function streamRun(run: Run, o: StreamOptions): Response {
  return sseResponse({
    frames: o.frames,
    heartbeatMs: o.heartbeatMs,
    heartbeat: o.heartbeat,
    crashFrame: (e) => {
      o.logger.error("unhandled exception", {
        request_id: o.requestId,
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        stack: e instanceof Error ? e.stack : undefined,
      });
      return o.errorFrame(ApiError.internal());
    },
    onClose: (end) => {
      // The core stops within a step; the settlement records why.
      if (end.outcome === "client_gone") run.abort("client_gone");
      else if (end.outcome === "error") run.abort("failed");
      o.onStreamEnd?.(end);
    },
  });
}

/** Feeds the run's single choice to `push` until it ends; an error event stops the run and is thrown; a run cut by the limit is a 504. */
export async function consumeRun(run: Run, push: (ev: CoreEvent) => void, timeoutMs: number): Promise<void> {
  for await (const ev of run.choices[0]!) {
    if (ev.type === "error") {
      run.abort("failed");
      throw ev.error;
    }
    push(ev);
  }
  if (run.abortReason === "timed_out") throw ApiError.timeout(timeoutMs);
}
