import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readGgufMetadata } from "../../../src/modelgen/gguf-read.ts";
import { validateSpec } from "../../../src/modelgen/spec.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { GGUF_SHAPES, LLAMA_1B_SHAPE, parseGgufKeyword, resolveGgufSources } from "../../load/gguf-files.ts";

describe("--gguf keywords", () => {
  test("<shape>-<format> names a shape and a writer format; anything else is a path", () => {
    expect(parseGgufKeyword("bench-q4_k_m")).toEqual({ shape: "bench", format: "q4_k_m" });
    expect(parseGgufKeyword("bench-q8_0")).toEqual({ shape: "bench", format: "q8_0" });
    expect(parseGgufKeyword("1b-q4_k_m")).toEqual({ shape: "1b", format: "q4_k_m" });
    for (const s of ["bench-q4", "huge-q8_0", "model.gguf", "./bench-q8_0.gguf"]) expect(parseGgufKeyword(s)).toBeNull();
  });

  test("the shapes: the bench's qwen2-0.5b, and Llama-3.2-1B's layers over the real Llama 3.1 vocabulary", () => {
    expect(GGUF_SHAPES.bench!.spec).toMatchObject({ id: "kiln-qwen2-0.5b-bench-v1", architecture: "qwen2", hidden: 896, layers: 24 });
    expect(LLAMA_1B_SHAPE).toMatchObject({ architecture: "llama", hidden: 2048, layers: 16, heads: 32, kvHeads: 8, headDim: 64, intermediate: 8192, vocab: 128_256, tiedEmbeddings: true, ropeTheta: 500_000 });
    expect(GGUF_SHAPES["1b"]).toMatchObject({ spec: LLAMA_1B_SHAPE, tokenizerPackage: "tokenizer-llama3_1" });
    expect(() => validateSpec(LLAMA_1B_SHAPE)).not.toThrow();
  });

  test("a keyword is written once by kiln's writer and reused; a path is taken as it is; anything else is refused", async () => {
    const dir = tempDir("kiln-gguf-files-");
    const lines: string[] = [];
    const [first] = await resolveGgufSources(["tiny-q8_0"], dir, (l) => lines.push(l));
    expect(first!.writtenS).toBeGreaterThanOrEqual(0);
    expect(first!.path.startsWith(dir)).toBe(true);
    const meta = readGgufMetadata(first!.path);
    expect(meta.kv.get("general.architecture")).toBe("llama");
    expect(Number(meta.kv.get("general.file_type"))).toBe(7); // LLAMA_FTYPE_MOSTLY_Q8_0
    expect(Number(meta.kv.get("llama.embedding_length"))).toBe(GGUF_SHAPES.tiny!.spec.hidden);
    expect(lines.some((l) => l.startsWith("tiny-q8_0: wrote in"))).toBe(true);

    const other = join(dir, "mine.gguf");
    writeFileSync(other, "GGUF");
    const again = await resolveGgufSources(["tiny-q8_0", other], dir, () => {});
    expect(again).toEqual([{ arg: "tiny-q8_0", path: first!.path }, { arg: other, path: other }]);

    await expect(resolveGgufSources([join(dir, "missing.gguf")], dir, () => {})).rejects.toThrow(/no such file, and not a keyword \(<bench\|tiny\|1b>-<f32\|/);
  });
});
