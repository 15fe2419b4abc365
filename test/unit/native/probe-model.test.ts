// The hand-encoded probe model: exact protobuf bytes for small pieces, and a real ONNX Runtime session over it.
import { describe, expect, test } from "bun:test";
import * as ort from "onnxruntime-node";
import { probeExpected, probeModel, ProtoWriter } from "../../../src/native/probe-model.ts";

describe("ProtoWriter", () => {
  test("varint fields, including multi-byte and negative values", () => {
    expect([...new ProtoWriter().int(1, 1).finish()]).toEqual([0x08, 0x01]);
    expect([...new ProtoWriter().int(2, 300).finish()]).toEqual([0x10, 0xac, 0x02]);
    expect([...new ProtoWriter().int(1, -1).finish()]).toEqual([0x08, ...Array(9).fill(0xff), 0x01]);
  });

  test("strings, nested messages and packed little-endian floats", () => {
    expect([...new ProtoWriter().string(3, "ab").finish()]).toEqual([0x1a, 0x02, 0x61, 0x62]);
    expect([...new ProtoWriter().message(7, (w) => w.int(1, 5)).finish()]).toEqual([0x3a, 0x02, 0x08, 0x05]);
    expect([...new ProtoWriter().floats(4, [1, -2]).finish()]).toEqual([0x22, 0x08, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
  });
});

describe("probeModel", () => {
  test("probeExpected is X·W + B", () => {
    expect(probeExpected([1, 0])).toEqual([1.5, 1]);
    expect(probeExpected([0, 1])).toEqual([3.5, 3]);
  });

  test("ONNX Runtime loads it and computes X·W + B", async () => {
    const session = await ort.InferenceSession.create(probeModel());
    expect(session.inputNames).toEqual(["X"]);
    expect(session.outputNames).toEqual(["Y"]);
    const out = await session.run({ X: new ort.Tensor("float32", Float32Array.from([3, -2]), [1, 2]) });
    expect([...(out.Y!.data as Float32Array)]).toEqual([-2.5, -3]);
    expect(out.Y!.dims).toEqual([1, 2]);
  });
});
