// A follower's cursor: stored and live events each sent once and in order, an interruption skipped when later events
// followed it, a gap in live sequence numbers noticed, and the stream's end taken from its terminal event.
import { describe, expect, test } from "bun:test";
import { FollowCursor } from "../../../src/live/follow-cursor.ts";

const row = (sequence: number, type: string, extra: object = {}) => ({ sequence, json: JSON.stringify({ type, ...extra, sequence_number: sequence }) });
const live = (sequence: number, type: string, extra: object = {}) => ({ sequence, type, json: row(sequence, type, extra).json });
const seqs = (frames: { data: string }[]) => frames.map((f) => JSON.parse(f.data).sequence_number as number);

describe("FollowCursor", () => {
  test("stored events after the cursor, then live ones; one heard twice or already read is sent once", () => {
    const c = new FollowCursor(0);
    expect(seqs(c.stored([row(1, "response.queued"), row(2, "response.in_progress")]))).toEqual([1, 2]);
    expect(c.last).toBe(2);
    expect(c.live(live(2, "response.in_progress"))).toBeNull();
    expect(c.live(live(3, "response.output_text.delta"))).toEqual({ event: "response.output_text.delta", data: live(3, "response.output_text.delta").json });
    expect(c.stored([row(3, "response.output_text.delta"), row(4, "response.output_text.delta")]).length).toBe(1);
    expect(c.last).toBe(4);
    expect(c.end).toBeNull();
  });

  test("a terminal event ends it, with the outcome the stream log records; nothing is sent after", () => {
    const done = new FollowCursor(-1);
    expect(seqs(done.stored([row(0, "response.created"), row(1, "response.completed"), row(2, "response.never")]))).toEqual([0, 1]);
    expect(done.end).toEqual({ outcome: "completed" });
    expect(done.live(live(3, "response.never"))).toBeNull();
    const failed = new FollowCursor(-1);
    failed.live(live(0, "response.failed"));
    expect(failed.end).toEqual({ outcome: "error", code: "server_error" });
    const error = new FollowCursor(-1);
    error.live(live(0, "error", { code: "server_shutting_down" }));
    expect(error.end).toEqual({ outcome: "error", code: "server_shutting_down" });
  });

  test("a stored error later events followed is skipped; one that is the last read ends the stream", () => {
    const c = new FollowCursor(-1);
    expect(seqs(c.stored([row(0, "response.created"), row(1, "error"), row(2, "response.in_progress")]))).toEqual([0, 2]);
    expect(c.end).toBeNull();
    expect(seqs(c.stored([row(3, "error", { code: "server_error" })]))).toEqual([3]);
    expect(c.end).toEqual({ outcome: "error", code: "server_error" });
  });

  test("a live event past the next number means some were missed; the next one, a repeat or anything after the end does not", () => {
    const c = new FollowCursor(4);
    expect(c.missed(live(5, "x"))).toBe(false);
    expect(c.missed(live(4, "x"))).toBe(false);
    expect(c.missed(live(7, "x"))).toBe(true);
    c.live(live(5, "response.completed"));
    expect(c.missed(live(9, "x"))).toBe(false);
  });
});
