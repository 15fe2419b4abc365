// syncDir: syncs the directory once, and a directory that cannot be opened or synced is not an error.
import { expect, test } from "bun:test";
import { fstatSync } from "node:fs";
import { join } from "node:path";
import { syncDir } from "../../../src/fs/sync-dir.ts";
import { tempDir } from "../../helpers/kiln.ts";

test("the directory is synced once, through an fd that is closed afterwards", () => {
  const fds: number[] = [];
  syncDir(tempDir(), (fd) => {
    expect(fstatSync(fd).isDirectory()).toBe(true);
    fds.push(fd);
  });
  expect(fds.length).toBe(1);
  expect(() => fstatSync(fds[0]!)).toThrow();
});

test("a sync that fails, or a directory that is not there, is left as it is", () => {
  const fds: number[] = [];
  syncDir(tempDir(), (fd) => {
    fds.push(fd);
    throw Object.assign(new Error("EINVAL: invalid argument, fsync"), { code: "EINVAL" });
  });
  expect(() => fstatSync(fds[0]!)).toThrow();
  syncDir(join(tempDir(), "missing"));
});
