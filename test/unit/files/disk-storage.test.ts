// The disk file storage: whole or absent (a temp file, fsync, rename), nothing left by a failed or cut upload, the
// start-up sweep, and ids that cannot reach outside the files directory.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskFileStorage } from "../../../src/files/disk-storage.ts";
import { newFileId } from "../../../src/files/file-id.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** A stream the test feeds by hand: push chunks, then end or fail it. */
function handFed() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (state.cancelled = true),
  });
  return { stream, state, push: (b: Uint8Array) => controller.enqueue(b), end: () => controller.close(), fail: (e: Error) => controller.error(e) };
}

const waitUntil = async (what: string, f: () => boolean) => {
  for (const until = Date.now() + 5000; !f(); await Bun.sleep(5)) if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
};

describe("DiskFileStorage", () => {
  test("put stores the bytes under the id only once they are complete; get gives them back with their size", async () => {
    const dataDir = tempDir();
    const s = new DiskFileStorage(dataDir);
    const id = newFileId();
    const feed = handFed();
    const put = s.put(id, feed.stream);
    feed.push(new Uint8Array(3 * 1024 * 1024).fill(7));
    // Under way: a temp file in tmp/, nothing under the id.
    await waitUntil("a temp file", () => readdirSync(s.tmpDir).length === 1);
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

  test("a body that fails part-way (a cut or refused upload) leaves no temp file and nothing under the id", async () => {
    const s = new DiskFileStorage(tempDir());
    const id = newFileId();
    const feed = handFed();
    const put = s.put(id, feed.stream);
    feed.push(new Uint8Array(2 * 1024 * 1024));
    await waitUntil("a temp file", () => readdirSync(s.tmpDir).length === 1);
    const cut = new Error("client went away");
    feed.fail(cut);
    await expect(put).rejects.toBe(cut);
    expect(readdirSync(s.tmpDir)).toEqual([]);
    expect(await s.get(id)).toBeNull();
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

  test("the sweep removes temp files and stored files no row keeps, and leaves the rest", async () => {
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

  test("ids of any other shape reach nothing: get is null, delete does nothing, put refuses before writing", async () => {
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

  test("delete removes the bytes; deleting what is not there is not an error", async () => {
    const s = new DiskFileStorage(tempDir());
    const id = newFileId();
    await s.put(id, new Blob(["hello"]).stream());
    await s.delete(id);
    expect(await s.get(id)).toBeNull();
    await s.delete(id);
  });
});
