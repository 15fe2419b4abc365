// Batches and their lines on both dialects: a validated batch's lines are written with its move to in_progress (not
// after a cancel), lines are claimed lowest first and end once, a put-back line runs again; leases are claimed only once
// expired (or all of them at a lone start), under a new epoch, renewed by their owner, and released by a drain; the end
// is written only by the runner that holds the batch, with its files' rows.
import { describe, expect, test } from "bun:test";
import { claimBatches, releaseBatchLeases, renewBatchLeases } from "../../../src/db/batch-leases-repo.ts";
import { batchById, batchCosts, claimLines, endBatch, endLine, insertBatch, lineCounts, moveBatch, openLines, pageBatches, releaseLines, startBatch } from "../../../src/db/batches-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const team = await createTeam(t.db, "a");
  const key = await createKey(t.db, team.id, "k");
  let n = 0;
  const add = (o: { owner?: string; epoch?: number; status?: string; leaseMs?: number } = {}) =>
    insertBatch(t.db, {
      id: `batch_${++n}`, teamId: team.id, keyId: key.id, endpoint: "/v1/embeddings", inputFileId: "file-x", completionWindow: "24h",
      status: o.status ?? "validating", createdAt: 100 + n, expiresAt: 100_000, leaseOwner: o.owner ?? "r1", leaseEpoch: o.epoch ?? 1,
    }, o.leaseMs ?? 60_000);
  const lines = (k: number) => Array.from({ length: k }, (_, i) => ({ line: i + 1, customId: `c${i + 1}`, bodyJson: "{}" }));
  return { ...t, team, key, add, lines };
}

describe.each(DIALECTS)("batches ($name)", (dialect) => {
  test("lines are written with the move to in_progress, claimed lowest first, ended once; a put-back line is claimed again", async () => {
    const { db, add, lines, close } = await setup(dialect);
    const b = await add();
    expect(await startBatch(db, b.id, lines(5), 200)).toBe(true);
    expect(await batchById(db, b.id)).toMatchObject({ status: "in_progress", total: 5, inProgressAt: 200 });
    expect((await claimLines(db, b.id, 2)).map((l) => l.line)).toEqual([1, 2]);
    expect(await endLine(db, b.id, 1, "done", '{"ok":1}')).toBe(true);
    expect(await endLine(db, b.id, 1, "failed", "{}")).toBe(false);
    expect(await releaseLines(db, b.id, [2])).toBe(1);
    expect((await claimLines(db, b.id, 10)).map((l) => l.line)).toEqual([2, 3, 4, 5]);
    expect(await endLine(db, b.id, 3, "failed", '{"bad":1}')).toBe(true);
    expect(await openLines(db, b.id)).toBe(3);
    expect(await releaseLines(db, b.id)).toBe(3);
    expect((await lineCounts(db, [b.id])).get(b.id)).toEqual({ done: 1, failed: 1 });
    await close();
  });

  test("a batch's cost is the sum of the usage rows that name it; a batch with none costs 0", async () => {
    const { db, add, team, key, close } = await setup(dialect);
    const [b1, b2, b3] = [await add(), await add(), await add()];
    const row = (requestId: string, costMicros: number, batchId?: string) => ({
      requestId, teamId: team.id, keyId: key.id, model: "m", endpoint: "chat", status: "completed" as const, inputTokens: 1, outputTokens: 1,
      reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros, serviceTier: "batch" as const, ...(batchId ? { batchId } : {}),
    });
    await recordSettlement(db, row("req_1", 150, b1.id));
    await recordSettlement(db, row("req_2", 250, b1.id));
    await recordSettlement(db, row("req_3", 40, b2.id));
    await recordSettlement(db, row("req_4", 999));
    expect(await batchCosts(db, [b1.id, b2.id, b3.id])).toEqual(new Map([[b1.id, 400], [b2.id, 40], [b3.id, 0]]));
    expect(await batchCosts(db, [])).toEqual(new Map());
    await close();
  });

  test("a batch cancelled while validating gets no lines", async () => {
    const { db, add, lines, close } = await setup(dialect);
    const b = await add();
    expect(await moveBatch(db, b.id, ["validating", "in_progress"], { status: "cancelling", cancellingAt: 150 })).toBe(true);
    expect(await startBatch(db, b.id, lines(3), 200)).toBe(false);
    expect(await openLines(db, b.id)).toBe(0);
    await close();
  });

  test("pages are newest first, with a keyset cursor", async () => {
    const { db, add, team, close } = await setup(dialect);
    for (let i = 0; i < 3; i++) await add();
    const first = (await pageBatches(db, team.id, { after: null, limit: 2 }))!;
    expect([first.rows.map((r) => r.id), first.hasMore]).toEqual([["batch_3", "batch_2"], true]);
    const next = (await pageBatches(db, team.id, { after: "batch_2", limit: 2 }))!;
    expect([next.rows.map((r) => r.id), next.hasMore]).toEqual([["batch_1"], false]);
    expect(await pageBatches(db, team.id, { after: "batch_9", limit: 2 })).toBeNull();
    await close();
  });

  test("leases: only expired ones are claimed (all at a lone start), under a new epoch; renewals tell the owner what it still holds; a drain releases", async () => {
    const { db, add, close } = await setup(dialect);
    const expired = await add({ owner: "dead", leaseMs: -1000 });
    const live = await add({ owner: "alive" });
    const done = await add({ owner: "dead", status: "completed", leaseMs: -1000 });
    const claimed = await claimBatches(db, "r2", { leaseMs: 5000, limit: 10, running: [] });
    expect(claimed.map((r) => [r.id, r.leaseOwner, r.leaseEpoch])).toEqual([[expired.id, "r2", 2]]);
    expect(await renewBatchLeases(db, "r2", { ids: [expired.id, live.id], leaseMs: 5000 })).toEqual([{ id: expired.id, epoch: 2 }]);
    // A lone kiln's start takes every unfinished batch but those running here.
    const all = await claimBatches(db, "r3", { leaseMs: 5000, limit: 10, running: [expired.id], all: true });
    expect(all.map((r) => r.id)).toEqual([live.id]);
    expect(await renewBatchLeases(db, "alive", { ids: [live.id], leaseMs: 5000 })).toEqual([]);
    expect(await releaseBatchLeases(db, "r2")).toBe(1);
    expect((await batchById(db, expired.id))!.leaseUntil).toBe(0);
    expect((await batchById(db, done.id))!.leaseOwner).toBe("dead");
    await close();
  });

  test("the end and its files' rows are written only by the runner that holds the batch", async () => {
    const { db, add, team, key, close } = await setup(dialect);
    const b = await add({ owner: "r1", epoch: 3, status: "finalizing" });
    const file = { id: "file-00000000000000000000000000000001", teamId: team.id, keyId: key.id, filename: "o.jsonl", purpose: "batch_output", bytes: 3, createdAt: 300 };
    expect(await endBatch(db, { id: b.id, owner: "r1", epoch: 2, set: { status: "completed", completedAt: 300 }, files: [file] })).toBe(false);
    expect(await endBatch(db, { id: b.id, owner: "r2", epoch: 3, set: { status: "completed", completedAt: 300 }, files: [file] })).toBe(false);
    expect(await endBatch(db, { id: b.id, owner: "r1", epoch: 3, set: { status: "completed", completedAt: 300, outputFileId: file.id }, files: [file] })).toBe(true);
    expect(await batchById(db, b.id)).toMatchObject({ status: "completed", completedAt: 300, outputFileId: file.id });
    await close();
  });
});
