// An external-weights file written strictly front to back (tensor by tensor), hashing the bytes as they go.
import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import type { ExternalTensor } from "./onnx-builder.ts";

/** Tensors start on 4 KiB boundaries so the runtime may map them directly. */
const ALIGN = 4096;
const ZEROS = new Uint8Array(ALIGN);

export function bytesOf(a: Float32Array | Uint8Array | Int8Array | Uint16Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export class DataFile {
  private fd: number;
  private hash: Hash = createHash("sha256");
  private offset = 0;
  private start = -1;

  constructor(readonly path: string) {
    this.fd = openSync(path, "w");
  }

  private write(bytes: Uint8Array): void {
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
    this.hash.update(bytes);
    this.offset += bytes.length;
  }

  /** Starts a tensor at the next aligned offset. */
  begin(): void {
    if (this.start >= 0) throw new Error("DataFile.begin: previous tensor not ended");
    const pad = (ALIGN - (this.offset % ALIGN)) % ALIGN;
    if (pad) this.write(ZEROS.subarray(0, pad));
    this.start = this.offset;
  }

  append(bytes: Uint8Array): void {
    if (this.start < 0) throw new Error("DataFile.append outside a tensor");
    this.write(bytes);
  }

  /** Ends the current tensor and returns where it lives. */
  end(name: string, dataType: number, dims: number[]): ExternalTensor {
    const t = { name, dataType, dims, offset: this.start, length: this.offset - this.start };
    this.start = -1;
    return t;
  }

  /** Writes one whole tensor. */
  tensor(name: string, dataType: number, dims: number[], bytes: Uint8Array): ExternalTensor {
    this.begin();
    this.append(bytes);
    return this.end(name, dataType, dims);
  }

  /** Closes the file and returns its sha256 (hex). */
  close(): string {
    closeSync(this.fd);
    return this.hash.digest("hex");
  }
}
