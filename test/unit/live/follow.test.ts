import { describe, expect, test } from "bun:test";
import { followResponse } from "../../../src/live/follow.ts";
import { LiveResponses } from "../../../src/live/live.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { appendEvent } from "../../../src/db/response-events-repo.ts";
import { insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** One process, no bus: a job not live here is not running anywhere. */
const ALONE = { teamId: 0, draining: () => false };

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "a");
  const key = await createKey(db, team.id, "k");
  await insertResponse(db, { id: "resp_1", teamId: team.id, keyId: key.id, model: "m", status: "in_progress", requestJson: "{}", responseJson: "{}", createdAt: 1, updatedAt: 1, expiresAt: 9e9 }, []);
  const live = new LiveResponses(memoryLogger());
  let seq = 0;
  /** Stores and publishes in one step, as the recorder does. */
  const emit = async (type: string) => {
    const json = JSON.stringify({ type, sequence_number: seq });
    await appendEvent(db, "resp_1", seq, json);
    live.publish("resp_1", { sequence: seq++, type, json });
  };
  return { db, live, emit };
}

async function collect(it: AsyncGenerator<{ data: string }, unknown>): Promise<number[]> {
  const out: number[] = [];
  for await (const f of it) out.push(JSON.parse(f.data).sequence_number);
  return out;
}

describe("following a stored response", () => {
  test("stored events after N, then live ones, each once, ending at the terminal event", async () => {
    const { db, live, emit } = await setup();
    live.begin("resp_1", () => {});
    await emit("response.created");
    await emit("response.queued");
    await emit("response.in_progress");
    // Started, the follower has subscribed and read the store in one step: what follows reaches it live.
    const following = collect(followResponse(db, live, "resp_1", 0, ALONE));
    await emit("response.output_text.delta");
    await emit("response.completed");
    await emit("response.never_sent");
    expect(await following).toEqual([1, 2, 3, 4]);
  });

  test("a response no longer live replays what was stored and ends", async () => {
    const { db, live, emit } = await setup();
    await emit("response.created");
    await emit("response.in_progress");
    expect(await collect(followResponse(db, live, "resp_1", -1, ALONE))).toEqual([0, 1]);
  });

  test("a stored error that later events followed (an interruption recovered from) is skipped; one at the end ends the replay", async () => {
    const { db, live, emit } = await setup();
    await emit("response.created");
    await emit("response.queued");
    await emit("error");
    await emit("response.in_progress");
    await emit("response.completed");
    expect(await collect(followResponse(db, live, "resp_1", -1, ALONE))).toEqual([0, 1, 3, 4]);
    expect(await collect(followResponse(db, live, "resp_1", 2, ALONE))).toEqual([3, 4]);
    const other = await setup();
    await other.emit("response.created");
    await other.emit("error");
    expect(await collect(followResponse(other.db, other.live, "resp_1", -1, ALONE))).toEqual([0, 1]);
  });

  test("the job ending closes a follower that saw no terminal event", async () => {
    const { db, live, emit } = await setup();
    live.begin("resp_1", () => {});
    await emit("response.created");
    const following = collect(followResponse(db, live, "resp_1", -1, ALONE));
    live.end("resp_1");
    expect(await following).toEqual([0]);
  });
});
