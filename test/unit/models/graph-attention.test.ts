// Whether a decoder graph attends through GroupQueryAttention, read from its node list: the op in com.microsoft's domain
// only, inside an If branch too, past a large inline tensor in a file, and nothing for bytes that are no model.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { GraphBuilder, int, T } from "../../../src/modelgen/onnx-builder.ts";
import { ProtoWriter } from "../../../src/native/probe-model.ts";
import { graphUsesGroupQueryAttention, hasGroupQueryAttention } from "../../../src/models/graph-attention.ts";
import { ProtoSource } from "../../../src/models/onnx-fields.ts";
import { tempDir } from "../../helpers/kiln.ts";

/** A graph of one node `op` in `domain`, after an inline tensor of `pad` floats. */
function oneNode(op: string, domain: string, pad = 0): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input("x", T.FLOAT, [1, 1, 32]);
  if (pad) g.inline("pad", T.FLOAT, [pad], new Uint8Array(pad * 4));
  g.node(op, [x, x, x], { num_heads: int(1), kv_num_heads: int(1) }, { domain, output: "y" });
  g.output("y", T.FLOAT, [1, 1, 32]);
  return g.encode("t");
}

const has = (bytes: Uint8Array) => hasGroupQueryAttention(ProtoSource.fromBytes(bytes));

describe("hasGroupQueryAttention", () => {
  test("com.microsoft's GroupQueryAttention is found; another op, or the name in another domain, is not", () => {
    expect(has(oneNode("GroupQueryAttention", "com.microsoft"))).toBe(true);
    expect(has(oneNode("MultiHeadAttention", "com.microsoft"))).toBe(false);
    expect(has(oneNode("GroupQueryAttention", "ai.example"))).toBe(false);
  });

  test("a GroupQueryAttention inside an If branch is found", () => {
    const inner = (w: ProtoWriter) => w.message(1, (n) => n.string(1, "q").string(2, "o").string(4, "GroupQueryAttention").string(7, "com.microsoft"));
    const model = new ProtoWriter()
      .int(1, 10)
      .message(7, (g) => g.message(1, (n) => n.string(1, "cond").string(2, "out").string(4, "If").message(5, (a) => a.string(1, "then_branch").message(6, inner).int(20, 5))))
      .finish();
    expect(has(model)).toBe(true);
  });

  test("read from a file a window at a time, past a large inline tensor; a file that is no model has none", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "model.onnx"), oneNode("GroupQueryAttention", "com.microsoft", 300_000));
    expect(graphUsesGroupQueryAttention(join(dir, "model.onnx"))).toBe(true);
    writeFileSync(join(dir, "plain.onnx"), oneNode("Attention", "", 300_000));
    expect(graphUsesGroupQueryAttention(join(dir, "plain.onnx"))).toBe(false);
    writeFileSync(join(dir, "bad.onnx"), "graph");
    expect(graphUsesGroupQueryAttention(join(dir, "bad.onnx"))).toBe(false);
  });
});
