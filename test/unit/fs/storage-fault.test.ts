import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { belowReserve, freeBytes } from "../../../src/fs/disk-space.ts";
import { StorageFault, storageFaultOf } from "../../../src/fs/storage-fault.ts";
import { tempDir } from "../../helpers/kiln.ts";

const coded = (code: string) => Object.assign(new Error(code), { code });

describe("storageFaultOf", () => {
  test("a full disk, from the filesystem or SQLite (its extended codes too), is 'full'", () => {
    for (const code of ["ENOSPC", "EDQUOT", "SQLITE_FULL"]) expect(storageFaultOf(coded(code))).toBe("full");
  });

  test("a disk that refuses writes is 'unwritable'; so is a StorageFault kiln raised itself", () => {
    for (const code of ["EROFS", "EPERM", "EACCES", "EIO", "SQLITE_READONLY", "SQLITE_READONLY_DBMOVED", "SQLITE_IOERR_SHMSIZE", "SQLITE_CANTOPEN"]) {
      expect(storageFaultOf(coded(code))).toBe("unwritable");
    }
    expect(storageFaultOf(new StorageFault("full", "below the reserve"))).toBe("full");
  });

  test("an error wrapped by a query builder is found through its cause; anything else is not a storage fault", () => {
    expect(storageFaultOf(new Error("Failed query", { cause: coded("SQLITE_FULL") }))).toBe("full");
    for (const e of [coded("SQLITE_BUSY"), coded("SQLITE_CONSTRAINT_UNIQUE"), coded("ECONNREFUSED"), new Error("x"), "text", null, { code: 5 }]) {
      expect(storageFaultOf(e)).toBeNull();
    }
  });

  test("bun:sqlite's own error for a database it may not write is classified", () => {
    const dir = tempDir();
    new Database(`${dir}/ro.db`, { create: true }).close();
    const ro = new Database(`${dir}/ro.db`, { readonly: true });
    let caught: unknown;
    try {
      ro.run("CREATE TABLE t (v)");
    } catch (e) {
      caught = e;
    } finally {
      ro.close();
    }
    expect(storageFaultOf(caught)).toBe("unwritable");
  });
});

describe("disk space", () => {
  test("freeBytes reads the filesystem; belowReserve compares with the reserve, and cannot-tell is not below", () => {
    expect(freeBytes(tempDir())).toBeGreaterThan(0);
    expect(freeBytes("/no/such/dir")).toBeNull();
    expect(belowReserve("/d", 100, () => 99)).toBe(true);
    expect(belowReserve("/d", 100, () => 100)).toBe(false);
    expect(belowReserve("/d", 100, () => null)).toBe(false);
  });
});
