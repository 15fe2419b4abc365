// Media builds are byte-identical per spec, variants without an encoder keep every other byte, and text builds did not change.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, PRESETS, specHash, withoutAudio, withoutVision, type Dtype, type ModelSpec } from "../../../build/model/index.ts";
import { listFiles } from "../../../build/model/content-hash.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-media-det-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
let n = 0;
const build = (spec: ModelSpec, dtypes: Dtype[] = ["fp32"]) => buildModel({ spec, dtypes, outDir: join(root, `${n++}`, spec.id) });
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
const omni = PRESETS["tiny-omni"]!;

/** Files both folders have whose bytes differ. */
function differing(a: string, b: string): string[] {
  const bFiles = new Set(listFiles(b));
  return listFiles(a).filter((f) => bFiles.has(f) && sha(join(a, f)) !== sha(join(b, f)));
}

describe("media builds", () => {
  test("tiny-omni twice (fp32, q4, int8): the same files, bytes and content hash", async () => {
    const a = await build(omni, ["fp32", "q4", "int8"]);
    const b = await build(omni, ["fp32", "q4", "int8"]);
    const graphs = ["audio_encoder", "decoder_model_merged", "embed_tokens", "vision_encoder"];
    const onnx = graphs.flatMap((g) => ["", "_int8", "_q4"].flatMap((s) => [`onnx/${g}${s}.onnx`, `onnx/${g}${s}.onnx_data`]));
    expect(a.files).toEqual(
      ["audio_preprocessor_config.json", "config.json", "generation_config.json", "kiln.json", ...onnx, "preprocessor_config.json", "processor_config.json", "tokenizer.json", "tokenizer_config.json"].sort(),
    );
    expect(differing(a.dir, b.dir)).toEqual([]);
    expect(manifest(a.dir).build.content_hash).toBe(manifest(b.dir).build.content_hash);
  });

  test("without audio / without vision: a LLaVA / Ultravox folder whose shared files are byte-identical to tiny-omni's", async () => {
    const full = await build(omni);
    const noAudio = await build(withoutAudio(omni));
    const noVision = await build(withoutVision(omni));
    expect([withoutAudio(omni).id, withoutVision(omni).id]).toEqual(["kiln-tiny-omni-v1-no-audio", "kiln-tiny-omni-v1-no-vision"]);
    expect(manifest(noAudio.dir).media.layout).toBe("llava");
    expect(manifest(noVision.dir).media.layout).toBe("ultravox");
    expect(noAudio.files.filter((f) => f.includes("audio"))).toEqual([]);
    expect(noVision.files.filter((f) => f.includes("vision"))).toEqual([]);
    // Only the layout's own JSON differs: every graph, weight and tokenizer byte is shared.
    expect(differing(full.dir, noAudio.dir)).toEqual(["config.json", "kiln.json", "preprocessor_config.json", "processor_config.json"]);
    expect(differing(full.dir, noVision.dir)).toEqual(["config.json", "kiln.json", "preprocessor_config.json", "processor_config.json"]);
    // Ultravox's feature extractor is the standard preprocessor_config.json; kiln-omni keeps it beside the image one.
    const json = (d: string, f: string) => JSON.parse(readFileSync(join(d, f), "utf8"));
    expect(json(noVision.dir, "preprocessor_config.json")).toEqual({ ...json(full.dir, "audio_preprocessor_config.json"), processor_class: "UltravoxProcessor" });
    expect(json(noAudio.dir, "preprocessor_config.json")).toEqual({ ...json(full.dir, "preprocessor_config.json"), processor_class: "LlavaProcessor" });
    // The tiny-vision preset is tiny-omni without audio under another id.
    const vision = await build(PRESETS["tiny-vision"]!);
    expect(differing(vision.dir, noAudio.dir)).toEqual(["kiln.json"]);
  });

  test("another seed changes every graph's external weights, and leaves the tokenizer and the decoder's graph alone", async () => {
    const a = await build(omni);
    const c = await build({ ...omni, seed: 2 });
    const changed = differing(a.dir, c.dir);
    for (const g of ["audio_encoder", "decoder_model_merged", "embed_tokens", "vision_encoder"]) expect(changed).toContain(`onnx/${g}.onnx_data`);
    for (const f of ["tokenizer.json", "tokenizer_config.json", "onnx/decoder_model_merged.onnx", "onnx/embed_tokens.onnx"]) expect(changed).not.toContain(f);
  });
});

describe("text builds are unchanged by the media work", () => {
  // Recorded from the builder before media models existed (BUILDER_VERSION 9): kiln-tiny-v1's bytes must not move.
  test.each([
    [["fp32"], "b669f88032ff19ec2a05bc2b3b95b7151a0386db2b9ff600b05f0941817862c4", "432ed421da8f4c9738e2e42e69d393178ed69ab016720a7841132954936ca1c7"],
    [["fp32", "q4", "int8"], "7637a348ccbfb8c3e09355153f41775f1e0c32a3236060dc958bb9f1a0583ba2", "70059dc23b9bcf9abd7225873cf4b0f675f7d4491f1a43653d681969fcff1bc8"],
  ] as [Dtype[], string, string][])("kiln-tiny-v1 %p keeps its spec and content hashes", async (dtypes, specSha, contentSha) => {
    expect(specHash(PRESETS.tiny!, dtypes)).toBe(specSha);
    const r = await build(PRESETS.tiny!, dtypes);
    expect(manifest(r.dir).build).toEqual({ seed: 1, spec_hash: specSha, content_hash: contentSha });
  });
});
