// A stream of a stored response's events after sequence N: the stored ones, then the live ones, each exactly once
// and in order, ending at a terminal event or when the job ends. The listener is attached before the store is read,
// and an event is published only once it is stored, so no event falls between the two (one both read and heard is
// skipped by its sequence number).
import type { Db } from "../../db/client.ts";
import { eventsAfter } from "../../db/response-events-repo.ts";
import type { SseFrame, StreamEnd } from "../../http/sse-writer.ts";
import { Channel } from "../../scheduler/channel.ts";
import { type LiveEvent, type LiveResponses, TERMINAL_EVENTS } from "./live.ts";

function endOf(ev: LiveEvent): StreamEnd {
  if (ev.type === "error") return { outcome: "error", code: (JSON.parse(ev.json) as { code?: string | null }).code ?? null };
  if (ev.type === "response.failed") return { outcome: "error", code: "server_error" };
  return { outcome: "completed" };
}

export async function* followResponse(db: Db, live: LiveResponses, id: string, after: number): AsyncGenerator<SseFrame, StreamEnd> {
  const incoming = new Channel<LiveEvent>();
  const unlisten = live.listen(id, (ev) => (ev ? incoming.push(ev) : incoming.close()));
  let stored: { sequence: number; json: string }[];
  try {
    stored = await eventsAfter(db, id, after);
  } catch (e) {
    unlisten?.();
    throw e;
  }
  if (!unlisten) incoming.close();
  let last = after;
  try {
    for (const [i, row] of stored.entries()) {
      last = row.sequence;
      const type = (JSON.parse(row.json) as { type: string }).type;
      // A stream-level error (shutdown, lost worker) that later events followed was an interruption, not the end:
      // the response was recovered or failed after it, and a replay goes on to that.
      if (type === "error" && i < stored.length - 1) continue;
      yield { event: type, data: row.json };
      if (TERMINAL_EVENTS.has(type)) return endOf({ sequence: row.sequence, type, json: row.json });
    }
    for await (const ev of incoming) {
      if (ev.sequence <= last) continue;
      last = ev.sequence;
      yield { event: ev.type, data: ev.json };
      if (TERMINAL_EVENTS.has(ev.type)) return endOf(ev);
    }
    return { outcome: "completed" };
  } finally {
    unlisten?.();
  }
}
