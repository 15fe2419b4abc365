// A FileStorage that passes every call to a real one and counts the bytes read from each stored file (whole, ranged
// or streamed), optionally holding a file's stream at a gate: what a test needs to see that a file was not read, or
// to keep a read in flight.
import type { FileStorage, StoredFile } from "../../src/files/storage.ts";

export interface CountingStorage extends FileStorage {
  /** Bytes read so far from the file `id`. */
  bytesRead(id: string): number;
  /** Streams of `id` deliver their chunks only once `open` has been called; `entered` resolves when one first waits. */
  hold(id: string): { entered: Promise<void>; open(): void };
}

export function countingStorage(inner: FileStorage): CountingStorage {
  const read = new Map<string, number>();
  const gates = new Map<string, { entered: () => void; opened: Promise<void> }>();
  const add = (id: string, n: number) => read.set(id, (read.get(id) ?? 0) + n);
  const counted = (id: string, f: StoredFile): StoredFile => ({
    size: f.size,
    bytes: async () => {
      const b = await f.bytes();
      add(id, b.length);
      return b;
    },
    slice: async (start, end) => {
      const b = await f.slice(start, end);
      add(id, b.length);
      return b;
    },
    stream: () =>
      f.stream().pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          async transform(chunk, c) {
            const gate = gates.get(id);
            if (gate) {
              gate.entered();
              await gate.opened;
            }
            add(id, chunk.length);
            c.enqueue(chunk);
          },
        }),
      ),
    body: () => f.body(),
  });
  return {
    put: (id, body) => inner.put(id, body),
    get: async (id) => {
      const f = await inner.get(id);
      return f && counted(id, f);
    },
    delete: (id) => inner.delete(id),
    sweep: (keep) => inner.sweep(keep),
    bytesRead: (id) => read.get(id) ?? 0,
    hold(id) {
      let entered!: () => void;
      let open!: () => void;
      const enteredP = new Promise<void>((resolve) => (entered = resolve));
      gates.set(id, { entered, opened: new Promise<void>((resolve) => (open = resolve)) });
      return { entered: enteredP, open };
    },
  };
}
