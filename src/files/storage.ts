// Where uploaded files' bytes live, behind one small interface: a directory under the data dir (disk-storage.ts) or,
// when kiln runs as several replicas, a bucket in an S3-compatible object store (s3-storage.ts). The database row
// says a file exists; the storage only holds bytes under the file's id.

/** A stored file's bytes, read lazily. */
export interface StoredFile {
  readonly size: number;
  stream(): ReadableStream<Uint8Array>;
  bytes(): Promise<Uint8Array>;
  /** Bytes `start..end` (end exclusive, clamped to the size) by a ranged read: the rest of the file is not read. */
  slice(start: number, end: number): Promise<Uint8Array>;
  /**
   * What a download Response sends: a Blob from disk (Bun sends it with its Content-Length, by sendfile), a stream
   * from S3 (Bun drops a Content-Length set beside a ReadableStream body, oven-sh/bun#10507, so it goes chunked).
   */
  body(): Blob | ReadableStream<Uint8Array>;
}

/** What a sweep removed: partial uploads, and stored files no row keeps; `unchecked` names what it could not look at. */
export interface SweepResult {
  partial: number;
  orphaned: number;
  unchecked?: string;
}

/** The storage cannot be used as configured (an unreachable store, a missing bucket, refused credentials). */
export class FileStorageError extends Error {}

export interface FileStorage {
  /**
   * Stores everything `body` yields under `id` and returns the byte count. Nothing is visible under `id` until
   * the whole body is durable; if `body` errors (a refused or cut upload) or the write fails, nothing is left.
   */
  put(id: string, body: ReadableStream<Uint8Array>): Promise<number>;
  /** The bytes stored under `id`, or null when there are none (they are read when the file is). */
  get(id: string): Promise<StoredFile | null>;
  /** Removes the bytes under `id` (none there is not an error). */
  delete(id: string): Promise<void>;
  /**
   * Start-up clean-up: removes partial uploads a crash left behind, and stored objects whose id `keep` rejects (bytes
   * stored by an upload that crashed before its row was written). On disk no upload runs meanwhile; in a shared
   * object store other replicas' uploads may, so only what is old enough to be theirs no longer is removed.
   */
  sweep(keep: (id: string) => boolean | Promise<boolean>): Promise<SweepResult>;
}
