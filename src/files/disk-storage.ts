// FileStorage on the local disk: `<data dir>/files/<id>`, named by the id alone (its shape checked, so no client
// text reaches a path). An upload is written to `files/tmp/`, fsynced, then renamed into place, so a file is either
// whole or absent; whatever a crash leaves in `tmp/` is removed by the start-up sweep. An upload stops (a StorageFault,
// answered 503) before it would leave the disk below the reserve that usage rows and the settlement journal need.
import { mkdirSync } from "node:fs";
import { type FileHandle, open, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { belowReserve, freeBytes, STORAGE_RESERVE_BYTES } from "../fs/disk-space.ts";
import { StorageFault } from "../fs/storage-fault.ts";
import { syncDir } from "../fs/sync-dir.ts";
import type { StreamReader } from "../http/body-reader.ts";
import { isFileId } from "./file-id.ts";
import type { FileStorage, StoredFile, SweepResult } from "./storage.ts";

/** Upload chunks are gathered into writes of this size: fewer system calls than one per network chunk. */
const WRITE_CHUNK = 1024 * 1024;

const isMissing = (e: unknown) => (e as { code?: string }).code === "ENOENT";

export class DiskFileStorage implements FileStorage {
  readonly dir: string;
  readonly tmpDir: string;

  /**
   * `dirFsync`: the fsync used on the files directory after a rename (tests inject a failing one); `freeBytes`: how
   * the free space is read (tests inject a disk that fills up).
   */
  constructor(dataDir: string, private readonly opts: { dirFsync?: (fd: number) => void; freeBytes?: (dir: string) => number | null } = {}) {
    this.dir = join(dataDir, "files");
    this.tmpDir = join(this.dir, "tmp");
    mkdirSync(this.tmpDir, { recursive: true, mode: 0o700 });
  }

  /** The path of a stored file, or null for anything that is not a file id. */
  private pathOf(id: string): string | null {
    return isFileId(id) ? join(this.dir, id) : null;
  }

  async put(id: string, body: ReadableStream<Uint8Array>): Promise<number> {
    const target = this.pathOf(id);
    if (!target) throw new Error(`not a file id: ${JSON.stringify(id.slice(0, 80))}`);
    const temp = join(this.tmpDir, `${id}.${crypto.randomUUID().slice(0, 8)}.part`);
    const reader = body.getReader();
    let fh: FileHandle | null = null;
    try {
      this.checkRoom();
      fh = await open(temp, "wx", 0o600);
      const bytes = await copyInto(reader, fh, () => this.checkRoom());
      await fh.sync();
      await fh.close();
      fh = null;
      await rename(temp, target);
      // The rename itself is durable only once the directory is synced; a sync that fails does not undo it, so
      // the upload goes on to its row (failing here would leave the file in place with no row until a restart).
      syncDir(this.dir, this.opts.dirFsync);
      return bytes;
    } catch (e) {
      // A failed write must stop the upload too (its body would otherwise wait for a reader forever).
      reader.cancel(e).catch(() => {});
      await fh?.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw e;
    }
  }

  /** Throws a StorageFault once the disk is below the reserve: what is left there is for usage, not files. */
  private checkRoom(): void {
    if (belowReserve(this.dir, STORAGE_RESERVE_BYTES, this.opts.freeBytes ?? freeBytes)) throw new StorageFault("full", `the disk of ${this.dir} is below its reserve of free space`);
  }

  async get(id: string): Promise<StoredFile | null> {
    const path = this.pathOf(id);
    if (!path) return null;
    const file = Bun.file(path);
    if (!(await file.exists())) return null;
    return { size: file.size, stream: () => file.stream(), bytes: () => file.bytes(), slice: (start, end) => file.slice(start, end).bytes(), body: () => file };
  }

  async delete(id: string): Promise<void> {
    const path = this.pathOf(id);
    if (!path) return;
    await unlink(path).catch((e) => {
      if (!isMissing(e)) throw e;
    });
  }

  async sweep(keep: (id: string) => boolean | Promise<boolean>): Promise<SweepResult> {
    let partial = 0;
    let orphaned = 0;
    for (const name of await readdir(this.tmpDir)) {
      await unlink(join(this.tmpDir, name));
      partial++;
    }
    for (const name of await readdir(this.dir)) {
      if (isFileId(name) && !(await keep(name))) {
        await unlink(join(this.dir, name));
        orphaned++;
      }
    }
    return { partial, orphaned };
  }
}

/** Writes everything `reader` yields to `fh`, in WRITE_CHUNK pieces, calling `beforeWrite` first each time; returns the byte count. */
async function copyInto(reader: StreamReader, fh: FileHandle, beforeWrite: () => void): Promise<number> {
  const buffer = new Uint8Array(WRITE_CHUNK);
  let filled = 0;
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    for (let at = 0; at < value.byteLength; ) {
      const n = Math.min(value.byteLength - at, WRITE_CHUNK - filled);
      buffer.set(value.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === WRITE_CHUNK) {
        beforeWrite();
        await writeAll(fh, buffer);
        filled = 0;
      }
    }
  }
  if (filled) {
    beforeWrite();
    await writeAll(fh, buffer.subarray(0, filled));
  }
  return total;
}

/** A write may take fewer bytes than given: loop until all are written. */
async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength; ) {
    const { bytesWritten } = await fh.write(bytes, at, bytes.byteLength - at);
    at += bytesWritten;
  }
}
