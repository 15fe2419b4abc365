// A stream of a stored response's events after sequence N: the stored ones, then the live ones, each exactly once
// and in order, ending at a terminal event or when the job ends. The listener is attached before the store is read,
// and an event is published only once it is stored, so no event falls between the two (one both read and heard is
// skipped by its sequence number). A job not live here is followed over the bus when there is one (follow-shared.ts).
import type { Db } from "../db/client.ts";
import { eventsAfter } from "../db/response-events-repo.ts";
import type { SseFrame, StreamEnd } from "../http/sse-writer.ts";
import { Channel } from "../scheduler/channel.ts";
import { FollowCursor } from "./follow-cursor.ts";
import { followShared, type SharedFollow } from "./follow-shared.ts";
import type { LiveResponses } from "./live.ts";
import type { LiveEvent } from "./live-bus.ts";

export async function* followResponse(db: Db, live: LiveResponses, id: string, after: number, shared: SharedFollow): AsyncGenerator<SseFrame, StreamEnd> {
  const incoming = new Channel<LiveEvent>();
  const unlisten = live.listen(id, (ev) => (ev ? incoming.push(ev) : incoming.close()));
  // Not running here: with other replicas it may run on one of them (or be recovered by one); alone, it is not running.
  if (!unlisten && live.bus) return yield* followShared(db, live.bus, id, after, shared);
  let stored: { sequence: number; json: string }[];
  try {
    stored = await eventsAfter(db, id, after);
  } catch (e) {
    unlisten?.();
    throw e;
  }
  if (!unlisten) incoming.close();
  const cursor = new FollowCursor(after);
  try {
    yield* cursor.stored(stored);
    if (cursor.end) return cursor.end;
    for await (const ev of incoming) {
      const frame = cursor.live(ev);
      if (frame) yield frame;
      if (cursor.end) return cursor.end;
    }
    return { outcome: "completed" };
  } finally {
    unlisten?.();
  }
}
