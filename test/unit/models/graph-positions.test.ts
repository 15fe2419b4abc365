// The positions a decoder graph holds, read from its file: kiln's metadata bound, rotary cos-cache tables, subgraphs.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { GraphBuilder, int, T } from "../../../src/modelgen/onnx-builder.ts";
import { POSITIONS_KEY } from "../../../src/modelgen/rotary.ts";
import { ProtoWriter } from "../../../src/native/probe-model.ts";
import { contextProblem, graphPositions, positionsBound } from "../../../src/models/graph-positions.ts";
import { ProtoSource } from "../../../src/models/onnx-fields.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** A graph with one com.microsoft RotaryEmbedding over a cos table of `rows` rows (kiln's builds before builder 10). */
function tableGraph(rows: number, metadata?: number, pad = 0): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input("x", T.FLOAT, [1, 1, 32]);
  const ids = g.input("position_ids", T.INT64, [1, 1]);
  // A large inline tensor first, so a reader that walks a file must skip past it.
  if (pad) g.inline("pad", T.FLOAT, [pad], new Uint8Array(pad * 4));
  g.inline("cos", T.FLOAT, [rows, 16], new Uint8Array(rows * 64));
  g.inline("sin", T.FLOAT, [rows, 16], new Uint8Array(rows * 64));
  g.node("RotaryEmbedding", [x, ids, "cos", "sin"], { num_heads: int(1) }, { domain: "com.microsoft", output: "y" });
  g.output("y", T.FLOAT, [1, 1, 32]);
  if (metadata !== undefined) g.metadata.set(POSITIONS_KEY, String(metadata));
  return g.encode("t");
}

const bound = (bytes: Uint8Array) => positionsBound(ProtoSource.fromBytes(bytes));

describe("positionsBound", () => {
  test("a rotary cos table bounds the positions by its rows, named in the reason", () => {
    expect(bound(tableGraph(4096))).toEqual({ positions: 4096, source: 'its rotary cos cache "cos" has 4096 rows' });
  });

  test("kiln's metadata states the bound; with a table too, the smaller wins", () => {
    const g = new GraphBuilder();
    g.metadata.set(POSITIONS_KEY, "131072");
    expect(bound(g.encode("m"))).toEqual({ positions: 131072, source: "its metadata's max_position_embeddings is 131072" });
    expect(bound(tableGraph(4096, 131072))!.positions).toBe(4096);
    expect(bound(tableGraph(8192, 2048))).toEqual({ positions: 2048, source: "its metadata's max_position_embeddings is 2048" });
  });

  test("a graph that states nothing (no metadata, caches computed in the graph) has no bound", () => {
    const g = new GraphBuilder();
    const x = g.input("x", T.FLOAT, [1, 1, 32]);
    const cos = g.node("Cos", [g.input("angles", T.FLOAT, [1, 16])]);
    g.node("RotaryEmbedding", [x, g.input("p", T.INT64, [1, 1]), cos, cos], { num_heads: int(1) }, { domain: "com.microsoft", output: "y" });
    expect(bound(g.encode("n"))).toBeNull();
  });

  test("GroupQueryAttention's cos cache (input 7), unpacked dims, and nodes inside an If branch are found", () => {
    // Hand-written: dims as unpacked varints, the GroupQueryAttention inside the `then_branch` subgraph of an If node.
    const inner = (w: ProtoWriter) =>
      w.message(1, (n) => {
        for (const i of ["q", "k", "v", "pk", "pv", "sk", "tl", "gqa_cos", "gqa_sin"]) n.string(1, i);
        n.string(2, "o").string(4, "GroupQueryAttention").string(7, "com.microsoft");
      });
    const model = new ProtoWriter()
      .int(1, 10)
      .message(7, (g) => {
        g.message(1, (n) => n.string(1, "cond").string(2, "out").string(4, "If").message(5, (a) => a.string(1, "then_branch").message(6, inner).int(20, 5)));
        g.message(5, (t) => t.int(1, 2048).int(1, 16).int(2, 10).string(8, "gqa_cos"));
      })
      .finish();
    expect(bound(model)).toEqual({ positions: 2048, source: 'its rotary cos cache "gqa_cos" has 2048 rows' });
  });

  test("read from a file a window at a time, past a large inline tensor, it finds what the bytes give", () => {
    const dir = tempDir();
    const bytes = tableGraph(512, 100_000, 300_000);
    writeFileSync(join(dir, "model.onnx"), bytes);
    expect(graphPositions(join(dir, "model.onnx"))).toEqual(bound(bytes));
    expect(bound(bytes)!.positions).toBe(512);
  });

  test("a file that is not a protobuf states no bound (its load reports what is wrong)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "model.onnx"), "graph");
    expect(graphPositions(join(dir, "model.onnx"))).toBeNull();
  });
});

describe("contextProblem", () => {
  const b = { positions: 4096, source: 'its rotary cos cache "cos" has 4096 rows' };

  test("a context within the bound, or a graph without one, is fine", () => {
    expect(contextProblem(4096, "kiln.json context_length", b, "onnx/model.onnx")).toBeNull();
    expect(contextProblem(1 << 20, "kiln.json context_length", null, "onnx/model.onnx")).toBeNull();
  });

  test("past it, the reason names the field, the graph file, the bound and where it comes from", () => {
    expect(contextProblem(8192, "kiln.json context_length", b, "onnx/model.onnx")).toBe(
      'kiln.json context_length 8192 is more than onnx/model.onnx holds (its rotary cos cache "cos" has 4096 rows): set kiln.json context_length to 4096 or less',
    );
  });
});
