// What every FileStorage promises, one test body run against each: the disk under the data dir and an S3 bucket on a
// real S3-compatible server. Whole or absent, nothing left by a cut upload, the sweep of orphans, ids that reach
// nothing, delete. What only one of them does is tested in disk-storage.test.ts and s3-storage.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskFileStorage } from "../../../src/files/disk-storage.ts";
import { newFileId } from "../../../src/files/file-id.ts";
import { S3FileStorage } from "../../../src/files/s3-storage.ts";
import type { FileStorage } from "../../../src/files/storage.ts";
import { handFed } from "../../helpers/hand-fed.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { startS3Server, type TestS3Server } from "../../helpers/s3-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const MiB = 1024 * 1024;

interface StorageUnderTest {
  storage: FileStorage;
  /** Uploads under way or left behind, as the backing store shows them: temp files, open multipart uploads. */
  partials(): string[];
  /** The stored ids, as the backing store lists them. */
  stored(): Promise<string[]>;
  /** Puts something the storage did not write where a stored file would be (an id-less name). */
  plantForeign(): Promise<void>;
}

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(() => s3.stop());

const FACTORIES: [string, () => StorageUnderTest][] = [
  ["disk", () => {
    const s = new DiskFileStorage(tempDir());
    return {
      storage: s,
      partials: () => readdirSync(s.tmpDir),
      stored: async () => readdirSync(s.dir).filter((n) => n !== "tmp" && n !== "NOTES.txt").sort(),
      plantForeign: async () => writeFileSync(join(s.dir, "NOTES.txt"), "not a file id: left alone"),
    };
  }],
  ["s3", () => {
    // A prefix of its own per test: the bucket is shared by the file's tests.
    const prefix = `t${crypto.randomUUID().slice(0, 8)}/files/`;
    const s = new S3FileStorage({ ...s3, prefix, staleUploadMs: 3_600_000, orphanGraceMs: 0 });
    return {
      storage: s,
      partials: () => s3.openUploads(),
      stored: async () => (await s3.keys(prefix)).map((k) => k.slice(prefix.length)).filter((n) => n !== "NOTES.txt"),
      plantForeign: async () => void (await s3.client.write(`${prefix}NOTES.txt`, "not a file id: left alone")),
    };
  }],
];

for (const [name, make] of FACTORIES) {
  describe(`FileStorage on ${name}`, () => {
    test("put stores the bytes under the id only once they are complete; get gives them back with their size", async () => {
      const { storage: s, partials, stored } = make();
      const id = newFileId();
      const feed = handFed();
      const put = s.put(id, feed.stream);
      // More than one S3 part: the store has begun receiving it.
      feed.push(new Uint8Array(6 * MiB).fill(7));
      await waitFor(partials, { what: "an upload under way", until: (p) => p.length === 1 });
      expect(await s.get(id)).toBeNull();
      expect(await stored()).toEqual([]);
      feed.push(Uint8Array.of(1, 2, 3));
      feed.end();
      expect(await put).toBe(6 * MiB + 3);
      expect(partials()).toEqual([]);
      expect(await stored()).toEqual([id]);
      const file = (await s.get(id))!;
      expect(file.size).toBe(6 * MiB + 3);
      const bytes = await file.bytes();
      expect([bytes.length, bytes[0], bytes.at(-4), ...bytes.subarray(-3)]).toEqual([6 * MiB + 3, 7, 7, 1, 2, 3]);
      const streamed = Buffer.concat(await Array.fromAsync(file.stream()));
      expect(Buffer.compare(streamed, bytes)).toBe(0);
    });

    test("slice reads a range of the bytes (clamped to the size), so a file's head is read without the rest", async () => {
      const { storage: s } = make();
      const id = newFileId();
      const bytes = Uint8Array.from({ length: 3 * MiB + 5 }, (_, i) => (i * 31) % 251);
      await s.put(id, new Response(bytes).body!);
      const file = (await s.get(id))!;
      expect(Buffer.from(await file.slice(0, 4096)).equals(Buffer.from(bytes.subarray(0, 4096)))).toBe(true);
      expect(Buffer.from(await file.slice(2 * MiB, 2 * MiB + 10)).equals(Buffer.from(bytes.subarray(2 * MiB, 2 * MiB + 10)))).toBe(true);
      expect(Buffer.from(await file.slice(3 * MiB, 4 * MiB)).equals(Buffer.from(bytes.subarray(3 * MiB)))).toBe(true);
      expect((await file.slice(0, 0)).length).toBe(0);
    });

    test("a body that fails part-way (a cut or refused upload) leaves no partial upload and nothing under the id", async () => {
      const { storage: s, partials, stored } = make();
      const id = newFileId();
      const feed = handFed();
      const put = s.put(id, feed.stream);
      feed.push(new Uint8Array(6 * MiB));
      await waitFor(partials, { what: "an upload under way", until: (p) => p.length === 1 });
      const cut = new Error("client went away");
      feed.fail(cut);
      await expect(put).rejects.toBe(cut);
      // S3: Bun rejects at once and sends AbortMultipartUpload right after (a few ms here).
      await waitFor(partials, { what: "no partial upload", until: (p) => p.length === 0 });
      expect(await s.get(id)).toBeNull();
      expect(await stored()).toEqual([]);
    });

    test("a small body and an empty one are stored whole", async () => {
      const { storage: s, stored } = make();
      const [small, empty] = [newFileId(), newFileId()];
      expect(await s.put(small, new Blob(["hello"]).stream())).toBe(5);
      expect(await s.put(empty, new Blob([]).stream())).toBe(0);
      expect(await stored()).toEqual([small, empty].sort());
      expect(new TextDecoder().decode(await (await s.get(small))!.bytes())).toBe("hello");
      expect((await s.get(empty))!.size).toBe(0);
    });

    test("the sweep removes stored files no row keeps (the row may be checked asynchronously), and leaves the rest", async () => {
      const { storage: s, stored, plantForeign } = make();
      const kept = newFileId();
      const orphan = newFileId();
      for (const id of [kept, orphan]) await s.put(id, new Blob(["x"]).stream());
      await plantForeign();
      const swept = await s.sweep(async (id) => id === kept);
      expect([swept.partial, swept.orphaned]).toEqual([0, 1]);
      expect(await stored()).toEqual([kept]);
      expect(await s.get(orphan)).toBeNull();
      expect(await s.get(kept)).not.toBeNull();
    });

    test("ids of any other shape reach nothing: get is null, delete does nothing, put refuses before writing", async () => {
      const { storage: s, partials, stored } = make();
      const real = newFileId();
      await s.put(real, new Blob(["mine"]).stream());
      for (const id of ["file-../../secret", "../secret", "file-..%2F..%2Fsecret", "file-/etc/passwd", `${real}/..`, `${real}/x`, "tmp", ""]) {
        expect(await s.get(id)).toBeNull();
        await s.delete(id);
        await expect(s.put(id, new Blob(["x"]).stream())).rejects.toThrow("not a file id");
      }
      expect(partials()).toEqual([]);
      expect(await stored()).toEqual([real]);
    });

    test("delete removes the bytes; deleting what is not there is not an error", async () => {
      const { storage: s, stored } = make();
      const id = newFileId();
      await s.put(id, new Blob(["hello"]).stream());
      await s.delete(id);
      expect(await s.get(id)).toBeNull();
      expect(await stored()).toEqual([]);
      await s.delete(id);
    });
  });
}

