import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { closeDatabase, openDatabase } from "../../../src/db/client.ts";
import { storageTrouble } from "../../../src/db/storage-health.ts";
import { STORAGE_RESERVE_BYTES } from "../../../src/fs/disk-space.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { canFaultStorage, setImmutable } from "../../helpers/storage-faults.ts";

describe("storageTrouble (SQLite)", () => {
  test("none on a healthy disk; below the reserve the disk is full, and blocking (the database and journal share it)", async () => {
    const db = await openDatabase(tempDir());
    try {
      expect(storageTrouble(db)).toBeNull();
      expect(storageTrouble(db, () => STORAGE_RESERVE_BYTES - 1)).toEqual({ kind: "full", blocking: true, message: "The server's disk is full." });
      expect(storageTrouble(db, () => null)).toBeNull();
    } finally {
      await closeDatabase(db);
    }
  });

  test.if(canFaultStorage())("an immutable database file is an unwritable database, whatever the free space", async () => {
    const dir = tempDir();
    const db = await openDatabase(dir);
    const file = join(dir, "kiln.db");
    setImmutable([file], true);
    try {
      expect(storageTrouble(db)).toEqual({ kind: "unwritable", blocking: true, message: "The server cannot write to its database." });
    } finally {
      setImmutable([file], false);
      await closeDatabase(db);
    }
  });
});
