// Following a response that runs on another replica, or on none right now (its replica died, and a recovery will end
// it): the store is the truth and the bus only says when to look. The events stored after N go first (a finished
// response needs no bus at all); then live events are sent as heard, and the store is read again whenever one was
// missed (a gap in the sequence numbers), the subscription is (re)made, the job's end is heard, or nothing was heard
// for HEAL_MS. The stream ends at a terminal event, or when the stored response is gone or ended.
import type { Db } from "../db/client.ts";
import { eventsAfter } from "../db/response-events-repo.ts";
import { findResponse, TERMINAL } from "../db/responses-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { SseFrame, StreamEnd } from "../http/sse-writer.ts";
import { Channel } from "../scheduler/channel.ts";
import { FollowCursor } from "./follow-cursor.ts";
import type { LiveBus, LiveEvent } from "./live-bus.ts";

/** Without anything heard for this long, the store is read again (a lost message, a lost connection, a dead replica). */
export const HEAL_MS = 1000;

export interface SharedFollow {
  /** The response's team: its row tells whether it ended (a row gone or ended ends the stream). */
  teamId: number;
  /** True once this server drains: a follower then ends with server_shutting_down, to reconnect to another replica. */
  draining: () => boolean;
  /** Aborts when the client leaves, so a follower waiting for news stops at once. */
  signal?: AbortSignal;
  healMs?: number;
}

/** Something to look at the store for: the subscription (re)made, the job's end, a quiet interval. */
const LOOK = Symbol("look");
const QUIET = Symbol("quiet");
type Signal = LiveEvent | typeof LOOK | typeof QUIET;

function shuttingDown(): SseFrame {
  const e = ApiError.shuttingDown();
  return { event: "error", data: JSON.stringify({ type: "error", code: e.code, message: e.message, param: null }) };
}

export async function* followShared(db: Db, bus: LiveBus, id: string, after: number, o: SharedFollow): AsyncGenerator<SseFrame, StreamEnd> {
  const cursor = new FollowCursor(after);
  yield* cursor.stored(await eventsAfter(db, id, after));
  if (cursor.end) return cursor.end;
  const inbox = new Channel<Signal>();
  const unsubscribe = bus.subscribe(id, { event: (ev) => inbox.push(ev), end: () => inbox.push(LOOK), ready: () => inbox.push(LOOK) });
  let heard = false;
  const timer = setInterval(() => {
    if (!heard) inbox.push(QUIET);
    heard = false;
  }, o.healMs ?? HEAL_MS);
  timer.unref();
  const leave = () => inbox.close();
  o.signal?.addEventListener("abort", leave);
  if (o.signal?.aborted) leave();
  try {
    for await (const s of inbox) {
      if (o.draining()) {
        yield shuttingDown();
        return { outcome: "error", code: "server_shutting_down" };
      }
      if (typeof s === "object") {
        heard = true;
        if (!cursor.missed(s)) {
          const frame = cursor.live(s);
          if (frame) yield frame;
          if (cursor.end) return cursor.end;
          continue;
        }
      }
      // Read before the events: a row that had ended then has all its events stored by now.
      const row = await findResponse(db, id, o.teamId);
      yield* cursor.stored(await eventsAfter(db, id, cursor.last));
      if (cursor.end) return cursor.end;
      if (!row) return { outcome: "completed" };
      if (TERMINAL.has(row.status)) return row.status === "failed" ? { outcome: "error", code: "server_error" } : { outcome: "completed" };
    }
    return { outcome: "client_gone" };
  } finally {
    clearInterval(timer);
    o.signal?.removeEventListener("abort", leave);
    unsubscribe();
  }
}
