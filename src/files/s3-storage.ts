// FileStorage in an S3-compatible object store, so several replicas share the files: `<prefix><id>` objects in one
// bucket, written by Bun's S3 client as a streamed multipart upload (a 1 GiB upload holds a few parts in memory),
// whole or absent, and swept of what a crashed replica left (orphaned objects, open multipart uploads).
import { S3Client, type S3File } from "bun";
import { isFileId } from "./file-id.ts";
import { abortUpload, type BucketAddress, listOpenUploads, staleUploads } from "./s3-uploads.ts";
import { type FileStorage, FileStorageError, type StoredFile, type SweepResult } from "./storage.ts";

const MiB = 1024 * 1024;

export interface S3StorageOptions extends BucketAddress {
  /** Key prefix of the stored files (default "files/"). */
  prefix?: string;
  /** Bytes per part of a multipart upload (S3's minimum, 5 MiB, by default): one part is buffered while it is sent. */
  partSize?: number;
  /** Parts sent at once (default 2): memory held by one upload is about partSize × (queueSize + 1). */
  queueSize?: number;
  /**
   * An open multipart upload older than this is stale (its replica died mid-upload): the upload time limit plus a
   * margin for clocks, since no live upload can run longer.
   */
  staleUploadMs: number;
  /**
   * An object without a row is an orphan only once it is this old: another replica may have just completed it and be
   * about to write its row (default 15 minutes; tests use 0).
   */
  orphanGraceMs?: number;
  now?: () => number;
}

/** Bun's S3 errors carry S3's code (NoSuchKey, NoSuchBucket, AccessDenied…) or a network one (ConnectionRefused). */
const codeOf = (e: unknown) => (e as { code?: unknown }).code;

/** A stored object read lazily; its size comes from a HEAD, since an S3File's own size is unknown (NaN). */
function storedObject(file: S3File, size: number): StoredFile {
  return {
    size,
    stream: () => file.stream(),
    bytes: () => file.bytes(),
    // A GET with a Range header (an empty range is answered without asking the store, which would refuse it).
    slice: async (start, end) => (Math.min(end, size) > start ? file.slice(start, Math.min(end, size)).bytes() : new Uint8Array()),
    // Not the S3File itself: Bun answers `new Response(s3File)` with a 302 to a presigned URL of the store, which a
    // client may not reach. Streamed, the body goes out chunked (Bun drops a Content-Length beside a stream, #10507).
    body: () => file.stream(),
  };
}

export class S3FileStorage implements FileStorage {
  readonly prefix: string;
  private readonly client: S3Client;
  private readonly now: () => number;

  constructor(private readonly opts: S3StorageOptions) {
    this.prefix = opts.prefix ?? "files/";
    this.now = opts.now ?? Date.now;
    this.client = new S3Client({ endpoint: opts.endpoint, bucket: opts.bucket, region: opts.region, accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey });
  }

  /** The object key of a stored file, or null for anything that is not a file id. */
  keyOf(id: string): string | null {
    return isFileId(id) ? `${this.prefix}${id}` : null;
  }

  async put(id: string, body: ReadableStream<Uint8Array>): Promise<number> {
    const key = this.keyOf(id);
    if (!key) throw new Error(`not a file id: ${JSON.stringify(id.slice(0, 80))}`);
    // Bun reads the body part by part: a body that fits one part is one PutObject; a longer one is
    // CreateMultipartUpload, an UploadPart per part (at most queueSize in flight, the body read no faster), then
    // CompleteMultipartUpload. S3 shows no object under the key until that last call succeeds, and then the whole one:
    // that is the moment the bytes are durable and whole. If the body errors (a cut or refused upload) or a call
    // fails, Bun rejects and sends AbortMultipartUpload, which discards the parts: nothing is left under the key. (The
    // abort goes out just after the rejection, a few ms here; a replica killed in between leaves an open upload for
    // the sweep.)
    // (Wrapped in a Response: Bun's types do not list a bare ReadableStream, which it reads the same way.)
    return await this.client.file(key).write(new Response(body), {
      partSize: this.opts.partSize ?? 5 * MiB,
      queueSize: this.opts.queueSize ?? 2,
      type: "application/octet-stream",
    });
  }

  async get(id: string): Promise<StoredFile | null> {
    const key = this.keyOf(id);
    if (!key) return null;
    const file = this.client.file(key);
    try {
      // HeadObject: the size of a whole object (S3 never shows a partial one), or 404 NoSuchKey.
      return storedObject(file, (await file.stat()).size);
    } catch (e) {
      if (codeOf(e) === "NoSuchKey") return null;
      throw e;
    }
  }

  async delete(id: string): Promise<void> {
    const key = this.keyOf(id);
    // DeleteObject succeeds whether or not the key exists.
    if (key) await this.client.delete(key);
  }

  /**
   * Aborts open multipart uploads under the prefix older than staleUploadMs, then deletes objects older than
   * orphanGraceMs whose id `keep` rejects. Other replicas may be uploading meanwhile: the two ages keep their work safe.
   */
  async sweep(keep: (id: string) => boolean | Promise<boolean>): Promise<SweepResult> {
    const now = this.now();
    let partial = 0;
    let orphaned = 0;
    const open = await this.unreachable("list its open multipart uploads", () => listOpenUploads(this.opts, this.prefix));
    for (const upload of Array.isArray(open) ? staleUploads(open, now - this.opts.staleUploadMs) : []) {
      await abortUpload(this.opts, upload);
      partial++;
    }
    const graceMs = this.opts.orphanGraceMs ?? 15 * 60_000;
    for await (const object of this.objects()) {
      const id = object.key.slice(this.prefix.length);
      if (!isFileId(id) || !(Date.parse(object.lastModified) <= now - graceMs)) continue;
      if (await keep(id)) continue;
      await this.client.delete(object.key);
      orphaned++;
    }
    return Array.isArray(open) ? { partial, orphaned } : { partial, orphaned, unchecked: `open multipart uploads (${open.unlisted})` };
  }

  /** Every object under the prefix (ListObjectsV2, page by page). */
  private async *objects(): AsyncGenerator<{ key: string; lastModified: string }> {
    let token: string | undefined;
    do {
      const page = await this.unreachable("list its objects", () => this.client.list({ prefix: this.prefix, continuationToken: token }));
      for (const o of page.contents ?? []) yield { key: o.key, lastModified: o.lastModified ?? "" };
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
  }

  /** Runs a listing; a failure is a FileStorageError naming the bucket, the endpoint and what S3 said (no secret). */
  private async unreachable<T>(what: string, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      const [code, message] = [String(codeOf(e) ?? ""), (e as Error).message];
      const said = code && !message.startsWith(code) ? `${code}: ${message}` : message;
      throw new FileStorageError(`the S3 bucket "${this.opts.bucket}" at ${this.opts.endpoint} cannot ${what} (${said})`);
    }
  }
}
