// Where a follower of a stored response stands: the last sequence number it sent, which stored or live events to send
// next (each once, in order), whether some were missed, and how the stream ends. Pure; follow.ts does the reading.
import type { SseFrame, StreamEnd } from "../http/sse-writer.ts";
import { TERMINAL_EVENTS } from "./live.ts";
import type { LiveEvent } from "./live-bus.ts";

function endOf(ev: LiveEvent): StreamEnd {
  if (ev.type === "error") return { outcome: "error", code: (JSON.parse(ev.json) as { code?: string | null }).code ?? null };
  if (ev.type === "response.failed") return { outcome: "error", code: "server_error" };
  return { outcome: "completed" };
}

export class FollowCursor {
  /** Set once a terminal event was sent: nothing follows it. */
  end: StreamEnd | null = null;

  constructor(public last: number) {}

  /**
   * Stored events read after `last`, in order: the frames to send, up to a terminal event. A stream-level error
   * (shutdown, lost worker) that later events followed was an interruption, not the end: the response was recovered
   * or failed after it, so it is skipped and the frames go on to that.
   */
  stored(rows: readonly { sequence: number; json: string }[]): SseFrame[] {
    const frames: SseFrame[] = [];
    for (const [i, row] of rows.entries()) {
      if (this.end || row.sequence <= this.last) continue;
      this.last = row.sequence;
      const type = (JSON.parse(row.json) as { type: string }).type;
      if (type === "error" && i < rows.length - 1) continue;
      frames.push({ event: type, data: row.json });
      if (TERMINAL_EVENTS.has(type)) this.end = endOf({ sequence: row.sequence, type, json: row.json });
    }
    return frames;
  }

  /** A live event: its frame, or null when it was sent already (or the stream has ended). */
  live(ev: LiveEvent): SseFrame | null {
    if (this.end || ev.sequence <= this.last) return null;
    this.last = ev.sequence;
    if (TERMINAL_EVENTS.has(ev.type)) this.end = endOf(ev);
    return { event: ev.type, data: ev.json };
  }

  /** Whether events before this live one were not heard (a lost message): the store has them, since it is published after being stored. */
  missed(ev: LiveEvent): boolean {
    return !this.end && ev.sequence > this.last + 1;
  }
}
