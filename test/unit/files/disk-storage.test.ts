// What only the disk file storage does: a temp file under tmp/, fsync, rename into place (and a failed rename or
// directory sync), the sweep of temp files, and ids that cannot reach outside the files directory. What every storage
// does is tested against both in file-storage.test.ts.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskFileStorage } from "../../../src/files/disk-storage.ts";
import { newFileId } from "../../../src/files/file-id.ts";
import { STORAGE_RESERVE_BYTES } from "../../../src/fs/disk-space.ts";
import { StorageFault } from "../../../src/fs/storage-fault.ts";
import { handFed } from "../../helpers/hand-fed.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { waitFor } from "../../helpers/wait-for.ts";

describe("DiskFileStorage", () => {
  test("an upload under way is a temp file in tmp/ named after the id; complete, it is renamed to files/<id>", async () => {
    const dataDir = tempDir();
    const s = new DiskFileStorage(dataDir);
    const id = newFileId();
    const feed = handFed();
    const put = s.put(id, feed.stream);
    feed.push(new Uint8Array(3 * 1024 * 1024).fill(7));
    // Under way: a temp file in tmp/, nothing under the id.
    await waitFor(() => readdirSync(s.tmpDir), { what: "a temp file", until: (names) => names.length === 1 });
    expect(readdirSync(s.tmpDir)[0]).toStartWith(`${id}.`);
    expect(await s.get(id)).toBeNull();
    feed.push(Uint8Array.of(1, 2, 3));
    feed.end();
    expect(await put).toBe(3 * 1024 * 1024 + 3);
    expect(readdirSync(s.tmpDir)).toEqual([]);
    expect(existsSync(join(dataDir, "files", id))).toBe(true);
    const blob = (await s.get(id))!;
    expect(blob.size).toBe(3 * 1024 * 1024 + 3);
    const bytes = await blob.bytes();
    expect([bytes[0], bytes.at(-4), ...bytes.subarray(-3)]).toEqual([7, 7, 1, 2, 3]);
  });

  test("an upload stops with a StorageFault, leaving nothing, before it takes the disk below the reserve; none starts below it", async () => {
    const dataDir = tempDir();
    let free = STORAGE_RESERVE_BYTES + 2.5 * 1024 * 1024;
    const tmp = join(dataDir, "files", "tmp");
    // A disk as small as that: what the temp files hold is taken from it.
    const used = () => readdirSync(tmp).reduce((n, name) => n + statSync(join(tmp, name)).size, 0);
    const s = new DiskFileStorage(dataDir, { freeBytes: () => free - used() });
    const feed = handFed();
    const put = s.put(newFileId(), feed.stream);
    // Two MiB are written; the third would cross the reserve.
    for (let i = 0; i < 4; i++) feed.push(new Uint8Array(1024 * 1024));
    const stopped = await put.catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(StorageFault);
    expect((stopped as StorageFault).kind).toBe("full");
    expect(readdirSync(s.tmpDir)).toEqual([]);
    free = STORAGE_RESERVE_BYTES - 1;
    await expect(s.put(newFileId(), handFed().stream)).rejects.toBeInstanceOf(StorageFault);
    expect(readdirSync(s.tmpDir)).toEqual([]);
  });

  test("a write that fails (the rename cannot happen) removes the temp file and rejects", async () => {
    const dataDir = tempDir();
    const s = new DiskFileStorage(dataDir);
    const id = newFileId();
    // A directory where the file should go: the rename fails.
    mkdirSync(join(dataDir, "files", id, "sub"), { recursive: true });
    const feed = handFed();
    const put = s.put(id, feed.stream);
    feed.push(Uint8Array.of(1));
    feed.end();
    await expect(put).rejects.toThrow();
    expect(readdirSync(s.tmpDir)).toEqual([]);
  });

  test("a directory sync that fails after the rename does not fail the put: the file, its data synced, is whole in place", async () => {
    const dataDir = tempDir();
    let syncs = 0;
    const s = new DiskFileStorage(dataDir, {
      dirFsync: () => {
        syncs++;
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      },
    });
    const id = newFileId();
    const feed = handFed();
    const put = s.put(id, feed.stream);
    feed.push(Uint8Array.of(4, 5, 6));
    feed.end();
    expect(await put).toBe(3);
    expect(syncs).toBe(1);
    expect([...(await (await s.get(id))!.bytes())]).toEqual([4, 5, 6]);
    expect(readdirSync(s.tmpDir)).toEqual([]);
  });

  test("the sweep removes temp files (partial uploads) and stored files no row keeps, and leaves names that are not ids", async () => {
    const dataDir = tempDir();
    const s = new DiskFileStorage(dataDir);
    const kept = newFileId();
    const orphan = newFileId();
    for (const id of [kept, orphan]) await s.put(id, new Blob(["x"]).stream());
    writeFileSync(join(s.tmpDir, `${newFileId()}.abcd1234.part`), "partial");
    writeFileSync(join(s.tmpDir, `${newFileId()}.ef567890.part`), "partial");
    writeFileSync(join(s.dir, "NOTES.txt"), "not a file id: left alone");
    expect(await s.sweep((id) => id === kept)).toEqual({ partial: 2, orphaned: 1 });
    expect(readdirSync(s.tmpDir)).toEqual([]);
    expect(readdirSync(s.dir).sort()).toEqual([kept, "NOTES.txt", "tmp"].sort());
  });

  test("ids that try to leave the files directory reach no file there, and nothing is written", async () => {
    const dataDir = tempDir();
    const s = new DiskFileStorage(dataDir);
    writeFileSync(join(dataDir, "secret"), "do not serve");
    for (const id of ["file-../../secret", "../secret", "file-..%2F..%2Fsecret", "file-/etc/passwd", `${newFileId()}/..`, "tmp", ""]) {
      expect(await s.get(id)).toBeNull();
      await s.delete(id);
      await expect(s.put(id, new Blob(["x"]).stream())).rejects.toThrow("not a file id");
    }
    expect(existsSync(join(dataDir, "secret"))).toBe(true);
    expect(readdirSync(s.tmpDir)).toEqual([]);
  });
});
