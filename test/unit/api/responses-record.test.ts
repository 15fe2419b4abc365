// The recorder's writes: one macrotask's events of every stored response go to SQLite in one transaction, in order,
// each published only once it is stored; a response deleted mid-batch or a listener that throws costs no one else.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ResponseAssembler } from "../../../src/api/responses/assembler.ts";
import { LiveResponses } from "../../../src/live/live.ts";
import type { LiveEvent } from "../../../src/live/live-bus.ts";
import { ResponseRecorder } from "../../../src/api/responses/record.ts";
import { createSealer } from "../../../src/crypto/sealing.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { eventsAfter } from "../../../src/db/response-events-repo.ts";
import { deleteResponse, findResponse, insertResponse } from "../../../src/db/responses-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const IDS = ["resp_a", "resp_b", "resp_c"];

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const logger = memoryLogger();
  const live = new LiveResponses(logger);
  const sealer = createSealer(randomBytes(32));
  let transactions = 0;
  const client = sqliteOf(db).$client;
  const transaction = client.transaction.bind(client);
  client.transaction = ((fn: () => void) => {
    transactions++;
    return transaction(fn);
  }) as typeof client.transaction;
  const recorders = await Promise.all(IDS.map(async (id) => {
    await insertResponse(db, { id, teamId: team.id, keyId: key.id, model: "m", status: "in_progress", requestJson: "{}", responseJson: "{}", createdAt: 1, updatedAt: 1, expiresAt: 9e9 }, []);
    live.begin(id, () => {});
    const asm = new ResponseAssembler({ id, model: "m", createdAt: 1, echo: {}, sealer, includeEncrypted: false, summary: false });
    return { id, asm, rec: new ResponseRecorder({ db, live, logger, shutdown: { draining: false } }, asm, { nextSequence: 0, storedBytes: 0 }) };
  }));
  return { db, team, live, logger, recorders, transactions: () => transactions };
}

const deltas = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "response.output_text.delta", delta: `t${i}` }));

describe("stored stream writes", () => {
  test("one macrotask's events of every response: one transaction, in order, each published after it is stored", async () => {
    const { db, live, recorders, transactions } = await setup();
    const heard = new Map<string, { sequence: number; storedFirst: boolean }[]>();
    for (const { id } of recorders) {
      heard.set(id, []);
      // Whether the event is in the store at the moment it is published (read there and then, synchronously).
      const stored = sqliteOf(db).$client.query("SELECT 1 FROM response_events WHERE response_id = ? AND sequence = ?");
      live.listen(id, (ev: LiveEvent | null) => {
        if (ev) heard.get(id)!.push({ sequence: ev.sequence, storedFirst: stored.get(id, ev.sequence) !== null });
      });
    }
    const before = transactions();
    for (const { asm, rec } of recorders) {
      rec.emit(asm.start());
      rec.emit(deltas(5));
    }
    // Nothing is out before the macrotask ends: a listener could not yet find it in the store.
    expect(await eventsAfter(db, "resp_a", -1)).toEqual([]);
    expect([...heard.values()].flat()).toEqual([]);
    await waitFor(() => [...heard.values()].every((h) => h.length === 7), { what: "every event published" });
    expect(transactions() - before).toBe(1);
    for (const { id } of recorders) {
      expect((await eventsAfter(db, id, -1)).map((e) => e.sequence)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(heard.get(id)).toEqual([0, 1, 2, 3, 4, 5, 6].map((sequence) => ({ sequence, storedFirst: true })));
    }
  });

  test("a row saved after events lands with them; flush() writes at once", async () => {
    const { db, team, recorders } = await setup();
    const { id, asm, rec } = recorders[0]!;
    rec.emit(asm.start());
    asm.push({ type: "finish", reason: "stop", stopSequence: null });
    rec.save();
    await rec.flush();
    expect((await findResponse(db, id, team.id))?.status).toBe("completed");
    expect((await eventsAfter(db, id, -1)).length).toBe(2);
  });

  test("a discarded recorder (its launch failed) drops what it had queued", async () => {
    const { db, team, recorders } = await setup();
    const { id, asm, rec } = recorders[0]!;
    rec.emit(asm.start());
    rec.save();
    rec.discard();
    await rec.flush();
    expect(await eventsAfter(db, id, -1)).toEqual([]);
    expect((await findResponse(db, id, team.id))?.responseJson).toBe("{}");
  });

  test("a response deleted while its events wait costs only its own writes; the others land and nothing is logged", async () => {
    const { db, team, logger, recorders } = await setup();
    for (const { asm, rec } of recorders) rec.emit([...asm.start(), ...deltas(2)]);
    await deleteResponse(db, "resp_b", team.id);
    await recorders[0]!.rec.flush();
    expect((await eventsAfter(db, "resp_a", -1)).length).toBe(4);
    expect((await eventsAfter(db, "resp_c", -1)).length).toBe(4);
    expect(await eventsAfter(db, "resp_b", -1)).toEqual([]);
    // Later writes of the deleted response are skipped.
    recorders[1]!.rec.emit(deltas(1));
    await recorders[1]!.rec.flush();
    expect(logger.lines.filter((l) => l.level === "error")).toEqual([]);
  });

  test("a listener that throws is logged; the events are stored and the other responses' listeners still hear theirs", async () => {
    const { db, live, logger, recorders } = await setup();
    live.listen("resp_a", () => {
      throw new Error("listener broke");
    });
    const heardC: number[] = [];
    live.listen("resp_c", (ev) => ev && heardC.push(ev.sequence));
    for (const { asm, rec } of recorders) rec.emit(asm.start());
    await waitFor(() => heardC.length === 2, { what: "resp_c's events" });
    expect((await eventsAfter(db, "resp_a", -1)).length).toBe(2);
    expect(logger.lines.some((l) => l.level === "error" && String(l.error).includes("listener broke"))).toBe(true);
  });
});
