// The settlement journal's file format: one validated JSON line per settlement, appended durably, rewritten whole.
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { appendSettlement, journalPathFor, parseSettlement, readJournal, rewriteJournal, type SettlementRecord } from "../../../src/billing/settlement-journal.ts";
import { closeDatabase, localDirOf, openDatabase } from "../../../src/db/client.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { canFaultStorage, smallDisk } from "../../helpers/storage-faults.ts";
import { freshPostgresDatabase } from "../../helpers/shared-postgres.ts";

const record = (requestId: string): SettlementRecord => ({
  requestId, teamId: 1, keyId: 2, model: "m-v1", endpoint: "chat", status: "completed",
  inputTokens: 10, outputTokens: 5, reasoningTokens: 1, cachedTokens: 4, images: 0, costMicros: 30, createdAt: 1_767_225_600,
});

describe("settlement journal", () => {
  test("it lives in the database's local directory (the data dir, with Postgres this replica's); a database without one (in memory) has none", async () => {
    expect(journalPathFor("/data")).toBe("/data/settlements.jsonl");
    expect(journalPathFor(null)).toBeNull();
    const dir = tempDir();
    const db = await openDatabase(dir);
    expect(localDirOf(db)).toBe(dir);
    await closeDatabase(db);
    const replicaDir = tempDir();
    const pg = await openDatabase(replicaDir, { url: await freshPostgresDatabase() });
    expect(localDirOf(pg)).toBe(replicaDir);
    await closeDatabase(pg);
  });

  test("parseSettlement: a whole record, or null for a torn, foreign or out-of-range line", () => {
    const line = JSON.stringify(record("req_1"));
    expect(parseSettlement(line)).toEqual(record("req_1"));
    // Unknown fields are not carried into the database.
    expect(parseSettlement(JSON.stringify({ ...record("req_1"), extra: 1 }))).toEqual(record("req_1"));
    expect(parseSettlement(line.slice(0, 40))).toBeNull();
    expect(parseSettlement("null")).toBeNull();
    expect(parseSettlement("[1]")).toBeNull();
    expect(parseSettlement(JSON.stringify({ ...record("req_1"), status: "maybe" }))).toBeNull();
    expect(parseSettlement(JSON.stringify({ ...record("req_1"), costMicros: -1 }))).toBeNull();
    expect(parseSettlement(JSON.stringify({ ...record("req_1"), outputTokens: 1.5 }))).toBeNull();
    expect(parseSettlement(JSON.stringify({ ...record(""), requestId: "" }))).toBeNull();
  });

  test("parseSettlement: the service tier and its price factor round-trip; a line from before tiers has neither", () => {
    const batch = { ...record("req_b"), serviceTier: "batch" as const, priceFactorMilli: 500 };
    expect(parseSettlement(JSON.stringify(batch))).toEqual(batch);
    expect(parseSettlement(JSON.stringify(record("req_1")))).not.toHaveProperty("serviceTier");
    expect(parseSettlement(JSON.stringify({ ...batch, serviceTier: "gold" }))).toBeNull();
    expect(parseSettlement(JSON.stringify({ ...batch, priceFactorMilli: 0.5 }))).toBeNull();
  });

  test("parseSettlement: a batch line's batch id round-trips; one that is not text makes the line unreadable", () => {
    const line = { ...record("req_l"), serviceTier: "batch" as const, priceFactorMilli: 500, batchId: "batch_abc" };
    expect(parseSettlement(JSON.stringify(line))).toEqual(line);
    expect(parseSettlement(JSON.stringify(record("req_1")))).not.toHaveProperty("batchId");
    expect(parseSettlement(JSON.stringify({ ...line, batchId: 7 }))).toBeNull();
  });

  test("appends one line each (owner-only file); a line torn by a crash neither swallows the next nor is read as a record", () => {
    const path = join(tempDir("kiln-journal-"), "settlements.jsonl");
    appendSettlement(path, record("req_1"));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    appendFileSync(path, '{"requestId":"req_torn","te');
    appendSettlement(path, record("req_2"));
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
    const { records, unreadable } = readJournal(path);
    expect(records.map((r) => r.requestId)).toEqual(["req_1", "req_2"]);
    expect(unreadable).toEqual(['{"requestId":"req_torn","te']);
  });

  test.if(canFaultStorage())("a disk that fills up mid-line fails the append and leaves the journal as it was", () => {
    const disk = smallDisk(1);
    try {
      const path = join(disk.dir, "settlements.jsonl");
      appendSettlement(path, record("req_1"));
      const before = readFileSync(path, "utf8");
      disk.fill(0);
      // Longer than what the file's last page has room for: part of it is written before the disk says it is full.
      expect(() => appendSettlement(path, { ...record("req_2"), model: "m".repeat(64 * 1024) })).toThrow("ENOSPC");
      expect(readFileSync(path, "utf8")).toBe(before);
      // A rewrite that does not fit fails too, and the journal is still the old one, with no temporary file beside it.
      expect(() => rewriteJournal(path, [record("req_1"), { ...record("req_2"), model: "m".repeat(64 * 1024) }])).toThrow("ENOSPC");
      expect(readFileSync(path, "utf8")).toBe(before);
      expect(existsSync(`${path}.tmp`)).toBe(false);
    } finally {
      disk.unmount();
    }
  });

  test("rewriting keeps exactly the records given; none removes the file", () => {
    const path = join(tempDir("kiln-journal-"), "settlements.jsonl");
    for (const id of ["req_1", "req_2", "req_3"]) appendSettlement(path, record(id));
    rewriteJournal(path, [record("req_2")]);
    expect(readJournal(path)).toEqual({ records: [record("req_2")], unreadable: [] });
    expect(existsSync(`${path}.tmp`)).toBe(false);
    rewriteJournal(path, []);
    expect(existsSync(path)).toBe(false);
    expect(readJournal(path)).toEqual({ records: [], unreadable: [] });
  });
});
