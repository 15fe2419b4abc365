// Where uploaded files' bytes live, behind one small interface: a directory under the data dir now
// (disk-storage.ts), an object store when kiln runs as several replicas. The database row says a file exists; the
// storage only holds bytes under the file's id.

/**
 * A stored file's bytes, read lazily: `size`, `stream()`, `bytes()`. A Blob rather than a bare stream because Bun
 * sends a Blob with its Content-Length (and from disk with sendfile), while it drops a Content-Length set beside a
 * ReadableStream body (oven-sh/bun#10507) and sends it chunked. Bun's S3 files are Blobs too.
 */
export type StoredFile = Blob;

export interface FileStorage {
  /**
   * Stores everything `body` yields under `id` and returns the byte count. Nothing is visible under `id` until
   * the whole body is durable; if `body` errors (a refused or cut upload) or the write fails, nothing is left.
   */
  put(id: string, body: ReadableStream<Uint8Array>): Promise<number>;
  /** The bytes stored under `id`, or null when there are none (they are read when the Blob is). */
  get(id: string): Promise<StoredFile | null>;
  /** Removes the bytes under `id` (none there is not an error). */
  delete(id: string): Promise<void>;
  /**
   * Start-up clean-up, before any upload runs: removes partial uploads a crash left behind, and stored objects
   * whose id `keep` rejects (bytes stored by an upload that crashed before its row was written).
   */
  sweep(keep: (id: string) => boolean): Promise<{ partial: number; orphaned: number }>;
}
