// A protobuf field walker over a file read on demand: it lists a message's fields by offset and never reads the bytes
// of a field nobody asks for, so an ONNX graph's structure is read without loading its inline tensors.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** One field of a message: its number, and a varint's value or a length-delimited field's byte range. */
export interface Field {
  num: number;
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  wire: number;
  /** A varint's value (within 2^53; larger ones read as an approximation, never needed here). */
  value: number;
  start: number;
  end: number;
}

/** Bytes that are not a well-formed protobuf message (as opposed to a file that cannot be read). */
export class MalformedProto extends Error {}

const WINDOW = 1 << 16;
const utf8 = new TextDecoder();

/** Bytes of a protobuf message, from memory or from a file read a window at a time. */
export class ProtoSource {
  private window: Uint8Array = new Uint8Array(0);
  private windowAt = 0;

  private constructor(
    private readonly fd: number | null,
    readonly size: number,
    bytes?: Uint8Array,
  ) {
    if (bytes) this.window = bytes;
  }

  static fromBytes(bytes: Uint8Array): ProtoSource {
    return new ProtoSource(null, bytes.length, bytes);
  }

  /** Opens `path` and hands the source to `use`; the file is closed afterwards. */
  static withFile<R>(path: string, use: (src: ProtoSource) => R): R {
    const fd = openSync(path, "r");
    try {
      return use(new ProtoSource(fd, fstatSync(fd).size));
    } finally {
      closeSync(fd);
    }
  }

  /** Bytes [start, end): a view into the current window when it holds them, else a read. */
  bytes(start: number, end: number): Uint8Array {
    if (start < 0 || end > this.size || start > end) throw new MalformedProto(`protobuf range ${start}..${end} is outside the ${this.size} bytes`);
    if (start >= this.windowAt && end <= this.windowAt + this.window.length) return this.window.subarray(start - this.windowAt, end - this.windowAt);
    const length = Math.min(this.size - start, Math.max(WINDOW, end - start));
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd!, buf, got, length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    this.window = buf.subarray(0, got);
    this.windowAt = start;
    return this.bytes(start, end);
  }

  string(f: Field): string {
    return utf8.decode(this.bytes(f.start, f.end));
  }

  /** The fields of the message in [start, end) (the whole source by default), in order. */
  fields(start = 0, end = this.size): Field[] {
    const out: Field[] = [];
    let at = start;
    while (at < end) {
      const tag = this.varint(at);
      at = tag.next;
      const num = Math.floor(tag.value / 8), wire = tag.value % 8;
      if (wire === 0) {
        const v = this.varint(at);
        out.push({ num, wire, value: v.value, start: at, end: v.next });
        at = v.next;
      } else if (wire === 2) {
        const len = this.varint(at);
        out.push({ num, wire, value: len.value, start: len.next, end: len.next + len.value });
        at = len.next + len.value;
      } else if (wire === 1 || wire === 5) {
        const width = wire === 1 ? 8 : 4;
        out.push({ num, wire, value: 0, start: at, end: at + width });
        at += width;
      } else {
        throw new MalformedProto(`protobuf wire type ${wire} at byte ${at} is not supported`);
      }
      if (at > end) throw new MalformedProto(`protobuf field ${num} runs past its message (byte ${at} of ${end})`);
    }
    return out;
  }

  /** The varints packed in a length-delimited field (a packed repeated int64). */
  packed(f: Field): number[] {
    const out: number[] = [];
    for (let at = f.start; at < f.end; ) {
      const v = this.varint(at);
      out.push(v.value);
      at = v.next;
    }
    return out;
  }

  private varint(at: number): { value: number; next: number } {
    const bytes = this.bytes(at, Math.min(this.size, at + 10));
    let value = 0;
    for (let i = 0; i < bytes.length; i++) {
      value += (bytes[i]! & 0x7f) * 2 ** (7 * i);
      if (bytes[i]! < 0x80) return { value, next: at + i + 1 };
    }
    throw new MalformedProto(`protobuf varint at byte ${at} does not end`);
  }
}
