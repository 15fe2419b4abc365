// Every int8 weight kiln writes stays within ±INT8_MAX_LEVEL: a property of the files, true whatever CPU runs the test.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { onnx } from "onnx-proto";
import { buildModel, PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { INT8_MAX_LEVEL } from "../../../src/modelgen/quantize.ts";
import { T } from "../../../src/modelgen/onnx-builder.ts";
import { embedRowsName } from "../../../src/modelgen/decoder-graph.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

const root = tempDir("kiln-int8-range-");

/** The INT8 initializers of a graph, read from the graph itself or from its external data file. */
function int8Tensors(modelDir: string, file = "model_int8.onnx"): { name: string; values: Int8Array }[] {
  const model = onnx.ModelProto.decode(readFileSync(join(modelDir, "onnx", file)));
  const out: { name: string; values: Int8Array }[] = [];
  for (const t of model.graph!.initializer!) {
    if (t.dataType !== T.INT8) continue;
    const ext = Object.fromEntries((t.externalData ?? []).map((e) => [e.key, e.value]));
    let bytes: Uint8Array;
    if (ext.location) {
      const data = readFileSync(join(modelDir, "onnx", ext.location!));
      const offset = Number(ext.offset ?? 0);
      bytes = data.subarray(offset, offset + Number(ext.length));
    } else {
      bytes = t.rawData!;
    }
    out.push({ name: t.name!, values: new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  }
  return out;
}

describe("int8 weights on disk", () => {
  test.each([
    ["tiny (untied head)", { ...PRESETS.tiny!, id: "kiln-int8-range-v1" }],
    ["Qwen2 shape (tied head from the embedding rows)", TINY_QWEN2],
  ] as [string, ModelSpec][])("%s: every level is within ±INT8_MAX_LEVEL and the range is used", async (_, spec) => {
    const dir = join(root, spec.id);
    await buildModel({ spec, dtypes: ["int8"], outDir: dir });
    const tensors = int8Tensors(dir);
    // q, k, v, o, gate/up, down per layer (some fused) plus the head: at least one per layer and the head.
    expect(tensors.length).toBeGreaterThan(spec.layers);
    expect(tensors.some((t) => t.name.includes("lm_head") || t.name.includes("embed"))).toBe(true);
    for (const { name, values } of tensors) {
      let max = 0;
      for (const v of values) max = Math.max(max, Math.abs(v));
      // The embedding table is gathered and cast, never a matmul operand: its rows use the full ±127.
      const top = name === embedRowsName("model.embed_tokens.weight") ? 127 : INT8_MAX_LEVEL;
      if (max > top) throw new Error(`${name}: |level| ${max} > ${top}`);
      // Symmetric per-column (per-row for the table) scales put the largest weight at the top level.
      expect(max).toBe(top);
    }
    expect(tensors.map((t) => t.name)).toContain(embedRowsName("model.embed_tokens.weight"));
    const manifest = JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
    expect(manifest.kiln_manifest).toBe(2);
    expect(manifest.quantization).toEqual({ int8_max_level: INT8_MAX_LEVEL });
    expect(parseManifest(manifest, ["int8"]).int8MaxLevel).toBe(INT8_MAX_LEVEL);
  });
});
