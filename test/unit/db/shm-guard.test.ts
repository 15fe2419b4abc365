import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkSharedMemory } from "../../../src/db/shm-guard.ts";
import { StorageFault } from "../../../src/fs/storage-fault.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { canFaultStorage, setImmutable } from "../../helpers/storage-faults.ts";

const root = join(import.meta.dir, "..", "..", "..");

/**
 * In a process of its own (a SIGBUS there must not take the test runner with it): opens kiln's database in `dir`,
 * writes, makes its files immutable, then reads and writes through every path a repository uses, and prints what
 * each did; the files are made writable again before it closes the database.
 */
const script = (dir: string) => `
import { execFileSync } from "node:child_process";
import { closeDatabase, openDatabase } from "${root}/src/db/client.ts";
const db = await openDatabase(${JSON.stringify(dir)});
const c = db.lite.$client;
c.run("CREATE TABLE t (v TEXT)");
for (let i = 0; i < 200; i++) c.query("INSERT INTO t (v) VALUES (?)").run("x".repeat(500));
const files = ["kiln.db", "kiln.db-wal", "kiln.db-shm"].map((f) => ${JSON.stringify(dir)} + "/" + f);
execFileSync("chattr", ["+i", ...files]);
const tries = {
  query: () => c.query("SELECT count(*) AS n FROM t").get(),
  prepare: () => c.prepare("INSERT INTO t (v) VALUES ('y')").run(),
  run: () => c.run("DELETE FROM t"),
  transaction: () => c.transaction(() => c.query("INSERT INTO t (v) VALUES ('z')").run())(),
};
for (const [name, f] of Object.entries(tries)) {
  try { f(); console.log(name, "ran"); } catch (e) { console.log(name, e.name, e.kind); }
}
execFileSync("chattr", ["-i", ...files]);
console.log("count", c.query("SELECT count(*) AS n FROM t").get().n);
await closeDatabase(db);
`;

describe("checkSharedMemory", () => {
  test("a missing file passes (SQLite makes it before mapping it); an existing writable one passes", () => {
    const dir = tempDir();
    expect(() => checkSharedMemory(join(dir, "kiln.db-shm"))).not.toThrow();
    writeFileSync(join(dir, "x-shm"), "");
    expect(() => checkSharedMemory(join(dir, "x-shm"))).not.toThrow();
  });

  test.if(canFaultStorage())("an immutable file is a StorageFault naming it", () => {
    const dir = tempDir();
    const shm = join(dir, "kiln.db-shm");
    writeFileSync(shm, "");
    setImmutable([shm], true);
    try {
      expect(() => checkSharedMemory(shm)).toThrow(StorageFault);
      expect(() => checkSharedMemory(shm)).toThrow("kiln.db-shm cannot be written (EPERM)");
    } finally {
      setImmutable([shm], false);
    }
  });
});

describe.if(canFaultStorage())("guardSharedMemory", () => {
  test("with the database's files immutable, every statement fails as a StorageFault instead of a SIGBUS; writable again, it works", async () => {
    const dir = tempDir();
    const proc = Bun.spawn([process.execPath, "-e", script(dir)], { cwd: root, stdout: "pipe", stderr: "pipe" });
    const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
    setImmutable(["kiln.db", "kiln.db-wal", "kiln.db-shm"].map((f) => join(dir, f)), false);
    expect({ code, signal: proc.signalCode }).toEqual({ code: 0, signal: null });
    expect(out.trim().split("\n")).toEqual([
      "query StorageFault unwritable",
      "prepare StorageFault unwritable",
      "run StorageFault unwritable",
      "transaction StorageFault unwritable",
      "count 200",
    ]);
  });
});
