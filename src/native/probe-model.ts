// A tiny ONNX model (Y = X·W + B) encoded by hand, so `kiln doctor` can run a real session with no model files.

/** Protobuf wire writer: just the pieces an ONNX ModelProto needs (varints, length-delimited fields, packed floats). */
class ProtoWriter {
  private parts: number[] = [];

  private varint(n: number | bigint): void {
    let v = BigInt(n);
    if (v < 0n) v += 1n << 64n;
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      this.parts.push(byte);
    } while (v > 0n);
  }

  int(field: number, value: number): this {
    this.varint((field << 3) | 0);
    this.varint(value);
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(data.length);
    for (const b of data) this.parts.push(b);
    return this;
  }

  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  /** Packed little-endian float32, as protobuf requires whatever the host's byte order. */
  floats(field: number, values: number[]): this {
    const out = new Uint8Array(values.length * 4);
    const view = new DataView(out.buffer);
    values.forEach((v, i) => view.setFloat32(i * 4, v, true));
    return this.bytes(field, out);
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export { ProtoWriter };

const FLOAT = 1;

/** The weights baked into the probe model; `probeExpected` computes what a correct runtime must return. */
export const PROBE_W = [1, 2, 3, 4]; // 2×2, row-major
export const PROBE_B = [0.5, -1];

export function probeExpected(x: [number, number]): [number, number] {
  return [x[0] * PROBE_W[0]! + x[1] * PROBE_W[2]! + PROBE_B[0]!, x[0] * PROBE_W[1]! + x[1] * PROBE_W[3]! + PROBE_B[1]!];
}

function valueInfo(w: ProtoWriter, name: string, dims: number[]): void {
  w.string(1, name).message(2, (type) =>
    type.message(1, (tensor) =>
      tensor.int(1, FLOAT).message(2, (shape) => {
        for (const d of dims) shape.message(1, (dim) => dim.int(1, d));
      }),
    ),
  );
}

function initializer(w: ProtoWriter, name: string, dims: number[], values: number[]): void {
  for (const d of dims) w.int(1, d);
  w.int(2, FLOAT).floats(4, values).string(8, name);
}

/** ModelProto bytes (IR 8, opset 17): inputs X[1,2], output Y[1,2], MatMul then Add. */
export function probeModel(): Uint8Array {
  return new ProtoWriter()
    .int(1, 8) // ir_version
    .string(2, "kiln-doctor")
    .message(7, (g) => {
      g.message(1, (n) => n.string(1, "X").string(1, "W").string(2, "XW").string(3, "matmul").string(4, "MatMul"));
      g.message(1, (n) => n.string(1, "XW").string(1, "B").string(2, "Y").string(3, "add").string(4, "Add"));
      g.string(2, "probe");
      g.message(5, (t) => initializer(t, "W", [2, 2], PROBE_W));
      g.message(5, (t) => initializer(t, "B", [2], PROBE_B));
      g.message(11, (v) => valueInfo(v, "X", [1, 2]));
      g.message(12, (v) => valueInfo(v, "Y", [1, 2]));
    })
    .message(8, (o) => o.string(1, "").int(2, 17)) // opset_import: default domain, version 17
    .finish();
}
