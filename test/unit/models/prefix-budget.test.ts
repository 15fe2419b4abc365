// The prefix cache's per-worker budget: the operator's figure, or a tenth of what the weights leave, within bounds.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsePublicPrefixes } from "../../../src/models/manifest.ts";
import { PREFIX_BLOCK_TOKENS, prefixCacheBytes, prefixCacheSpec, weightBytes } from "../../../src/models/prefix-budget.ts";
import { tempDir } from "../../helpers/kiln.ts";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

describe("prefix cache budget", () => {
  test("a tenth of the memory the workers' weights leave, split over the workers, within 64 MiB..4 GiB", () => {
    expect(prefixCacheBytes({ totalMemory: 24 * GIB, weightBytes: [4 * GIB], workersPerModel: 1 })).toBe(Math.floor(2 * GIB * 1.0));
    expect(prefixCacheBytes({ totalMemory: 8 * GIB, weightBytes: [1 * GIB, 1 * GIB], workersPerModel: 2 })).toBe(Math.floor((4 * GIB * 0.1) / 4));
    expect(prefixCacheBytes({ totalMemory: 1 * GIB, weightBytes: [2 * GIB], workersPerModel: 1 })).toBe(64 * MIB);
    expect(prefixCacheBytes({ totalMemory: 512 * GIB, weightBytes: [1 * GIB], workersPerModel: 1 })).toBe(4096 * MIB);
    expect(prefixCacheBytes({ configuredMb: 10, totalMemory: 24 * GIB, weightBytes: [], workersPerModel: 1 })).toBe(10 * MIB);
  });

  test("off gives no spec; on gives the budget and the block size", () => {
    expect(prefixCacheSpec({ enabled: false, totalMemory: GIB, weightBytes: [], workersPerModel: 1 })).toBeUndefined();
    expect(prefixCacheSpec({ enabled: true, configuredMb: 3, totalMemory: GIB, weightBytes: [], workersPerModel: 1 })).toEqual({ maxBytes: 3 * MIB, blockTokens: PREFIX_BLOCK_TOKENS });
  });

  test("weightBytes counts each format's graph file and its external data", () => {
    const dir = tempDir("kiln-weights-");
    mkdirSync(join(dir, "onnx"));
    writeFileSync(join(dir, "onnx", "model_int8.onnx"), Buffer.alloc(100));
    writeFileSync(join(dir, "onnx", "model.onnx"), Buffer.alloc(10));
    writeFileSync(join(dir, "onnx", "model.onnx_data"), Buffer.alloc(1000));
    expect(weightBytes(dir, ["int8"])).toBe(100);
    expect(weightBytes(dir, ["fp32", "int8", "q4"])).toBe(1110);
  });
});

describe("kiln.json public_prefixes", () => {
  test("a list of non-empty strings, empty when absent; anything else is refused", () => {
    expect(parsePublicPrefixes({})).toEqual([]);
    expect(parsePublicPrefixes({ public_prefixes: ["You are kiln."] })).toEqual(["You are kiln."]);
    expect(() => parsePublicPrefixes({ public_prefixes: "You are kiln." })).toThrow(/public_prefixes/);
    expect(() => parsePublicPrefixes({ public_prefixes: [""] })).toThrow(/non-empty/);
  });
});
