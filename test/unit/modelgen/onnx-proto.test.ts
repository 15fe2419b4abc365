// kiln's own ONNX protobuf encoder produces exactly the bytes onnx-proto (the reference encoder) produces.
import { describe, expect, test } from "bun:test";
import { onnx } from "onnx-proto";
import { decoderGraph } from "../../../src/modelgen/decoder-graph.ts";
import { PRESETS } from "../../../src/modelgen/index.ts";
import { GraphBuilder, float, int, ints, T } from "../../../src/modelgen/onnx-builder.ts";
import { encodeModel, type ModelProto } from "../../../src/modelgen/onnx-proto.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

/** The same model as onnx-proto's message objects. */
function reference(m: ModelProto): Uint8Array {
  const g = m.graph;
  const vi = (v: (typeof g.input)[number]): onnx.IValueInfoProto => ({
    name: v.name,
    type: { tensorType: { elemType: v.elemType, shape: { dim: v.dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } },
  });
  return onnx.ModelProto.encode({
    irVersion: m.irVersion,
    producerName: m.producerName,
    producerVersion: m.producerVersion,
    opsetImport: m.opsetImport,
    metadataProps: m.metadataProps,
    graph: {
      name: g.name,
      node: g.node.map((n) => ({ ...n, attribute: n.attribute.map((a) => ({ ...a })) })),
      initializer: g.initializer.map((t) => ({ ...t })),
      input: g.input.map(vi),
      output: g.output.map(vi),
    },
  }).finish();
}

describe("ONNX encoder", () => {
  test.each([
    ["tiny fp32", () => decoderGraph(PRESETS.tiny!, "fp32")],
    ["tiny q4", () => decoderGraph(PRESETS.tiny!, "q4")],
    ["qwen2 int8", () => decoderGraph(TINY_QWEN2, "int8")],
  ])("%s graph matches onnx-proto byte for byte", (_, make) => {
    const g = make();
    g.external({ name: "w", dataType: T.FLOAT, dims: [4, 8], offset: 4096, length: 128 }, "model.onnx_data");
    const m = g.model("kiln-test");
    expect(encodeModel(m)).toEqual(reference(m));
  });

  test("negative ints, floats, scalar shapes and empty attribute lists", () => {
    const g = new GraphBuilder();
    g.input("x", T.FLOAT, [2, "n"]);
    g.input("k", T.INT64, []);
    g.node("Softmax", ["x"], { axis: int(-1) }, { output: "a" });
    g.node("Transpose", ["a"], { perm: ints([1, 0]) }, { output: "b" });
    g.node("LeakyRelu", ["b"], { alpha: float(-0.375) }, { output: "y" });
    g.int64([-9223372036854775807n, -1, 0, 1], [4]);
    g.output("y", T.FLOAT, ["n", 2]);
    const m = g.model("edge");
    const mine = encodeModel(m);
    expect(mine).toEqual(reference(m));
    const decoded = onnx.ModelProto.decode(mine);
    expect(decoded.graph!.node![0]!.attribute![0]!.i!.toString()).toBe("-1");
    expect(decoded.graph!.node![2]!.attribute![0]!.f).toBe(-0.375);
    expect(decoded.graph!.input![1]!.type!.tensorType!.shape!.dim).toEqual([]);
  });
});
