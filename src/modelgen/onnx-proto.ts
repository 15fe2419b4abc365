// A minimal protobuf encoder for the ONNX ModelProto subset kiln writes (no runtime dependency, deterministic bytes).
// Field numbers follow onnx.proto; field order and packed repeated int64s match onnx-proto's output byte for byte.

export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10, DOUBLE: 11 } as const;
export const AttributeType = { FLOAT: 1, INT: 2, INTS: 7 } as const;
export const EXTERNAL = 1;

export interface TensorProto {
  name: string;
  dataType: number;
  dims: number[];
  rawData?: Uint8Array;
  externalData?: { key: string; value: string }[];
  dataLocation?: number;
}
export interface AttributeProto {
  name: string;
  type: number;
  f?: number;
  i?: number;
  ints?: number[];
}
export interface NodeProto {
  name: string;
  opType: string;
  domain: string;
  input: string[];
  output: string[];
  attribute: AttributeProto[];
}
export interface ValueInfoProto {
  name: string;
  elemType: number;
  dims: (number | string)[];
}
export interface ModelProto {
  irVersion: number;
  producerName: string;
  producerVersion: string;
  opsetImport: { domain: string; version: number }[];
  /** metadata_props: key/value strings a reader finds without walking the graph (kiln's decoders state their positions bound). */
  metadataProps?: { key: string; value: string }[];
  graph: { name: string; node: NodeProto[]; initializer: TensorProto[]; input: ValueInfoProto[]; output: ValueInfoProto[] };
}

const utf8 = new TextEncoder();

/** Accumulates one message's bytes; sub-messages are encoded first and embedded with their length. */
class Writer {
  private parts: Uint8Array[] = [];
  private scratch: number[] = [];

  private flush() {
    if (this.scratch.length) {
      this.parts.push(Uint8Array.from(this.scratch));
      this.scratch = [];
    }
  }

  /** Varint of an int64 (negative values take ten bytes, as two's complement). */
  varint(v: number | bigint): this {
    let x = BigInt.asUintN(64, BigInt(v));
    if (x < 128n) {
      this.scratch.push(Number(x));
      return this;
    }
    while (x >= 128n) {
      this.scratch.push(Number(x & 127n) | 128);
      x >>= 7n;
    }
    this.scratch.push(Number(x));
    return this;
  }

  tag(field: number, wire: 0 | 2 | 5): this {
    return this.varint((field << 3) | wire);
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2).varint(b.length);
    this.flush();
    this.parts.push(b);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, utf8.encode(s));
  }

  int(field: number, v: number): this {
    return this.tag(field, 0).varint(v);
  }

  float(field: number, v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.tag(field, 5);
    this.flush();
    this.parts.push(b);
    return this;
  }

  packedInts(field: number, values: number[]): this {
    const inner = new Writer();
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  message(field: number, w: Writer): this {
    return this.bytes(field, w.finish());
  }

  finish(): Uint8Array {
    this.flush();
    const total = this.parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

function tensor(t: TensorProto): Writer {
  const w = new Writer();
  if (t.dims.length) w.packedInts(1, t.dims);
  w.int(2, t.dataType).string(8, t.name);
  if (t.rawData) w.bytes(9, t.rawData);
  for (const e of t.externalData ?? []) w.message(13, new Writer().string(1, e.key).string(2, e.value));
  if (t.dataLocation !== undefined) w.int(14, t.dataLocation);
  return w;
}

function attribute(a: AttributeProto): Writer {
  const w = new Writer().string(1, a.name);
  if (a.f !== undefined) w.float(2, a.f);
  if (a.i !== undefined) w.int(3, a.i);
  if (a.ints?.length) w.packedInts(8, a.ints);
  return w.int(20, a.type);
}

function node(n: NodeProto): Writer {
  const w = new Writer();
  for (const i of n.input) w.string(1, i);
  for (const o of n.output) w.string(2, o);
  w.string(3, n.name).string(4, n.opType);
  for (const a of n.attribute) w.message(5, attribute(a));
  return w.string(7, n.domain);
}

function valueInfo(v: ValueInfoProto): Writer {
  const shape = new Writer();
  for (const d of v.dims) shape.message(1, typeof d === "number" ? new Writer().int(1, d) : new Writer().string(2, d));
  const tensorType = new Writer().int(1, v.elemType).message(2, shape);
  return new Writer().string(1, v.name).message(2, new Writer().message(1, tensorType));
}

export function encodeModel(m: ModelProto): Uint8Array {
  const g = new Writer();
  for (const n of m.graph.node) g.message(1, node(n));
  g.string(2, m.graph.name);
  for (const t of m.graph.initializer) g.message(5, tensor(t));
  for (const v of m.graph.input) g.message(11, valueInfo(v));
  for (const v of m.graph.output) g.message(12, valueInfo(v));
  const w = new Writer().int(1, m.irVersion).string(2, m.producerName).string(3, m.producerVersion).message(7, g);
  for (const o of m.opsetImport) w.message(8, new Writer().string(1, o.domain).int(2, o.version));
  for (const p of m.metadataProps ?? []) w.message(14, new Writer().string(1, p.key).string(2, p.value));
  return w.finish();
}
