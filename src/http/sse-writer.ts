// The one SSE writer every family streams through: frames from the family's encoder (with optional `event:` lines),
// a heartbeat while the stream is idle, and a close hook told exactly once how the stream really ended.

export interface SseFrame {
  /** The `event:` line, for formats that dispatch on it (Responses, Messages); chat sends none. */
  event?: string;
  /** The `data:` payload: JSON text, or a literal such as chat's `[DONE]`. */
  data: string;
}

/** How a stream ended, for the request log line and usage: completed, client gone, or an error frame with its code. */
export type StreamEnd = { outcome: "completed" } | { outcome: "client_gone" } | { outcome: "error"; code: string | null };

export interface SseOptions {
  /** The family's frames; the generator's return value says how the stream ended (default: completed). */
  frames: AsyncGenerator<SseFrame, StreamEnd | void>;
  /** After this long without a frame, `heartbeat` is sent (a comment line when none is given). */
  heartbeatMs?: number;
  heartbeat?: SseFrame;
  /** The frame for a failure inside the encoder itself (a sanitized internal error in the family's shape); logs it. */
  crashFrame: (error: unknown) => SseFrame;
  /** Called once, when the stream ends for whatever reason. */
  onClose(end: StreamEnd): void;
}

export function encodeFrame(f: SseFrame): string {
  const data = f.data.includes("\n") ? f.data.split("\n").map((l) => `data: ${l}`).join("\n") : `data: ${f.data}`;
  return `${f.event ? `event: ${f.event}\n` : ""}${data}\n\n`;
}

const HEARTBEAT_COMMENT = ": keep-alive\n\n";
const IDLE = Symbol("idle");

/** Resolves to IDLE after `ms` unless cancelled first; its timer never keeps the process alive. */
function idleTimer(ms: number): { promise: Promise<typeof IDLE>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout>;
  const promise = new Promise<typeof IDLE>((resolve) => {
    timer = setTimeout(() => resolve(IDLE), ms);
    (timer as { unref?: () => void }).unref?.();
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };

export function sseResponse(opts: SseOptions): Response {
  const bytes = new TextEncoder();
  const it = opts.frames;
  let ended = false;
  const end = (e: StreamEnd) => {
    if (ended) return;
    ended = true;
    opts.onClose(e);
  };
  let pending: Promise<IteratorResult<SseFrame, StreamEnd | void>> | null = null;
  const stream = new ReadableStream<Uint8Array>({
    // Each pull enqueues one frame (or a heartbeat) or closes: a pull that returns empty-handed is not called again.
    async pull(controller) {
      try {
        pending ??= it.next();
        let r: IteratorResult<SseFrame, StreamEnd | void> | typeof IDLE;
        if (opts.heartbeatMs) {
          const timer = idleTimer(opts.heartbeatMs);
          r = await Promise.race([pending, timer.promise]);
          timer.cancel();
        } else r = await pending;
        if (r === IDLE) {
          controller.enqueue(bytes.encode(opts.heartbeat ? encodeFrame(opts.heartbeat) : HEARTBEAT_COMMENT));
          return;
        }
        pending = null;
        if (r.done) {
          controller.close();
          end(r.value ?? { outcome: "completed" });
          return;
        }
        controller.enqueue(bytes.encode(encodeFrame(r.value)));
      } catch (e) {
        if (ended) return;
        controller.enqueue(bytes.encode(encodeFrame(opts.crashFrame(e))));
        controller.close();
        end({ outcome: "error", code: "server_error" });
      }
    },
    cancel() {
      end({ outcome: "client_gone" });
      void it.return(undefined);
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}
