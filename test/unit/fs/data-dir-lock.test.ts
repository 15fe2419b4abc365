import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DataDirLockedError, holderAlive, LOCK_FILE, lockDataDir, parseHolder, processStartTime } from "../../../src/fs/data-dir-lock.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** A process that lives until killed, and one that has exited (its pid is free). */
async function processes() {
  const live = Bun.spawn(["sleep", "60"]);
  const dead = Bun.spawn(["true"]);
  await dead.exited;
  return { live, dead };
}

describe("parseHolder", () => {
  test("a pid with or without its start time; anything else is nobody", () => {
    expect(parseHolder("123 456\n")).toEqual({ pid: 123, started: 456 });
    expect(parseHolder("123\n")).toEqual({ pid: 123, started: null });
    expect(parseHolder("")).toBeNull();
    expect(parseHolder("12 3 4\n")).toBeNull();
    expect(parseHolder("abc")).toBeNull();
  });
});

describe("holderAlive", () => {
  test("a running process is alive; an exited one, or a pid now started at another time, is not", async () => {
    const { live, dead } = await processes();
    try {
      const started = processStartTime(live.pid);
      expect(started).not.toBeNull();
      expect(holderAlive({ pid: live.pid, started })).toBe(true);
      expect(holderAlive({ pid: live.pid, started: null })).toBe(true);
      // The pid reused by a program started later than the holder was.
      expect(holderAlive({ pid: live.pid, started: started! - 1 })).toBe(false);
      expect(holderAlive({ pid: dead.pid, started: null })).toBe(false);
    } finally {
      live.kill();
    }
  });
});

describe("lockDataDir", () => {
  test("refuses while a live process holds the dir, naming it; takes over the file of one that is gone", async () => {
    const dir = tempDir();
    const { live, dead } = await processes();
    try {
      writeFileSync(join(dir, LOCK_FILE), `${live.pid} ${processStartTime(live.pid)}\n`);
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
      expect(() => lockDataDir(dir)).toThrow(`pid ${live.pid}`);
      writeFileSync(join(dir, LOCK_FILE), `${dead.pid}\n`);
      const lock = lockDataDir(dir);
      expect(parseHolder(readFileSync(join(dir, LOCK_FILE), "utf8"))?.pid).toBe(process.pid);
      lock.release();
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    } finally {
      live.kill();
    }
  });

  test("release leaves a lock another process took over since", () => {
    const dir = tempDir();
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, LOCK_FILE), "1\n");
    lock.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe("1\n");
  });

  test("a lock this process holds counts as stale (a restart in the same process), and no temporary file is left", () => {
    const dir = tempDir();
    lockDataDir(dir);
    const again = lockDataDir(dir);
    again.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});
