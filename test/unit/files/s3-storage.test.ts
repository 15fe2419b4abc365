// What only the S3 file storage does, against a real S3-compatible server: a body of several parts comes back
// byte-identical, a body failing after parts were sent leaves no object and no open upload, the sweep's grace for
// other replicas' uploads, what it says when the store cannot list open uploads, an upload left open by a killed
// process aborted by upload id, and a bucket that cannot be reached named in one line without the secret.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { newFileId } from "../../../src/files/file-id.ts";
import { S3FileStorage } from "../../../src/files/s3-storage.ts";
import { abortUpload, listOpenUploads } from "../../../src/files/s3-uploads.ts";
import { FileStorageError } from "../../../src/files/storage.ts";
import { handFed } from "../../helpers/hand-fed.ts";
import { startS3Server, type TestS3Server } from "../../helpers/s3-server.ts";
import { patternSlice } from "../../helpers/upload-client.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const MiB = 1024 * 1024;
let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(() => s3.stop());

/** A storage under a prefix of its own (the bucket is shared by this file's tests). */
function storage(opts: { orphanGraceMs?: number; now?: () => number } = {}) {
  const prefix = `t${crypto.randomUUID().slice(0, 8)}/files/`;
  return new S3FileStorage({ ...s3, prefix, partSize: 5 * MiB, staleUploadMs: 3_600_000, ...opts });
}

/** The body of a generated file, `chunk` bytes at a time. */
function patternStream(bytes: number, chunk = MiB): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes) return c.close();
      const n = Math.min(chunk, bytes - at);
      c.enqueue(patternSlice(at, n));
      at += n;
    },
  });
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe("S3FileStorage", () => {
  test("a 12 MiB body is three parts of one multipart upload and comes back byte-identical, streamed or whole", async () => {
    const s = storage();
    const id = newFileId();
    expect(await s.put(id, patternStream(12 * MiB, 64 * 1024))).toBe(12 * MiB);
    // A multipart object's ETag ends with its part count.
    expect((await s3.client.file(s.keyOf(id)!).stat()).etag).toMatch(/-3"?$/);
    const file = (await s.get(id))!;
    expect(file.size).toBe(12 * MiB);
    const want = sha256(patternSlice(0, 12 * MiB));
    expect(sha256(Buffer.concat(await Array.fromAsync(file.stream())))).toBe(want);
    expect(sha256(await file.bytes())).toBe(want);
    // The download body is a stream, never the S3 file (Bun would answer that with a redirect to the store).
    expect(file.body()).toBeInstanceOf(ReadableStream);
  });

  test("a body that fails after two parts were stored leaves no object and no open multipart upload", async () => {
    const s = storage();
    const id = newFileId();
    const feed = handFed();
    const put = s.put(id, feed.stream);
    for (let i = 0; i < 11; i++) feed.push(patternSlice(i * MiB, MiB));
    // fauxqs keeps each open upload's parts as files: wait until two are stored.
    await waitFor(() => s3.openUploads().flatMap((u) => s3.storedParts(u)), { what: "two stored parts", until: (p) => p.length >= 2 });
    feed.fail(new Error("client went away"));
    await expect(put).rejects.toThrow("client went away");
    await waitFor(() => s3.openUploads(), { what: "the upload aborted", until: (u) => u.length === 0 });
    expect(await s.get(id)).toBeNull();
    expect(await s3.keys(s.prefix)).toEqual([]);
  });

  test("the sweep leaves objects younger than the grace (another replica may be about to write their row) and removes them after it", async () => {
    let now = Date.now();
    const s = storage({ now: () => now });
    const orphan = newFileId();
    await s.put(orphan, new Blob(["x"]).stream());
    expect(await s.sweep(() => false)).toMatchObject({ partial: 0, orphaned: 0 });
    expect(await s.get(orphan)).not.toBeNull();
    now += 15 * 60_000 + 5000;
    expect(await s.sweep(() => false)).toMatchObject({ partial: 0, orphaned: 1 });
    expect(await s3.keys(s.prefix)).toEqual([]);
  });

  test("an upload left open by a killed process: the sweep says it cannot list open uploads here, and an abort by upload id removes it", async () => {
    const s = storage({ orphanGraceMs: 0 });
    const key = s.keyOf(newFileId())!;
    // A process that starts a multipart upload and is killed with part 1 stored: a replica dying mid-upload.
    const child = Bun.spawn([process.execPath, "-e", KILLED_UPLOAD, s3.endpoint, s3.bucket, key], { stdout: "ignore", stderr: "inherit" });
    const [uploadId] = await waitFor(() => s3.openUploads().filter((u) => s3.storedParts(u).length > 0), { what: "an upload with a stored part", until: (u) => u.length === 1 });
    child.kill("SIGKILL");
    await child.exited;
    expect(await s3.keys(s.prefix)).toEqual([]);
    // fauxqs answers GET ?uploads with the object listing: not a ListMultipartUploads answer.
    expect(await listOpenUploads(s3, s.prefix)).toEqual({ unlisted: "the store does not implement ListMultipartUploads" });
    const swept = await s.sweep(() => false);
    expect(swept).toEqual({ partial: 0, orphaned: 0, unchecked: "open multipart uploads (the store does not implement ListMultipartUploads)" });
    expect(s3.openUploads()).toEqual([uploadId!]);
    await abortUpload(s3, { key, uploadId: uploadId! });
    expect(s3.openUploads()).toEqual([]);
    // Already gone: not an error.
    await abortUpload(s3, { key, uploadId: uploadId! });
  });

  test("a bucket that does not exist, or a store that does not answer, is a FileStorageError naming them, never the secret", async () => {
    for (const [endpoint, bucket, said] of [[s3.endpoint, "no-such-bucket", "NoSuchBucket"], ["http://127.0.0.1:9", "kiln-test", "ECONNREFUSED"]] as const) {
      const s = new S3FileStorage({ ...s3, endpoint, bucket, staleUploadMs: 1000 });
      const e = await s.sweep(() => true).then(() => null, (e: unknown) => e as Error);
      expect(e).toBeInstanceOf(FileStorageError);
      expect(e!.message).toContain(`"${bucket}" at ${endpoint}`);
      expect(e!.message).toContain(said);
      expect(e!.message).not.toContain(s3.secretAccessKey);
    }
  });
});

/** A child's script: writes 11 MiB of a multipart upload with 5 MiB parts, then waits to be killed. */
const KILLED_UPLOAD = `
const [endpoint, bucket, key] = process.argv.slice(-3);
const s3 = new Bun.S3Client({ endpoint, bucket, region: "us-east-1", accessKeyId: "k", secretAccessKey: "s" });
const w = s3.file(key).writer({ partSize: 5 * 1024 * 1024, queueSize: 1 });
for (let i = 0; i < 11; i++) await w.write(new Uint8Array(1024 * 1024));
await w.flush();
await new Promise(() => {});
`;
