// Media builds are byte-identical per spec, variants without an encoder keep every other byte, and text builds did not change.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildModel, PRESETS, specHash, withoutAudio, withoutVision, type Dtype, type ModelSpec } from "../../../src/modelgen/index.ts";
import { listFiles } from "../../../src/modelgen/content-hash.ts";

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

describe("text builds keep their bytes", () => {
  // Recorded at BUILDER_VERSION 10 (131,072 positions, rotary angles computed in the graph), the spec hashes and q4's
  // content (its one-token graph, model_step_q4.onnx) at 13: kiln-tiny-v1's bytes move only with a deliberate builder
  // change, which records them anew here.
  test.each([
    [["fp32"], "489855793efb5cb09b05e57e62fce0e1599d5a31d7be7af148d114b412246a24", "37f5390028e30ce875940e252f0fe12dfb55ba959c836026a3f2f954cf73c09f"],
    [["fp32", "q4", "int8"], "0ae533cd52776b7106a24416d5028cb814a9582e8abc7b25cf3009c5437837f6", "00e54e96b0b7319eeeb563da349f02b2bfa3a71452d0c21ebabd4c14d2d9e896"],
  ] as [Dtype[], string, string][])("kiln-tiny-v1 %p keeps its spec and content hashes", async (dtypes, specSha, contentSha) => {
    expect(specHash(PRESETS.tiny!, dtypes)).toBe(specSha);
    const r = await build(PRESETS.tiny!, dtypes);
    expect(manifest(r.dir).build).toEqual({ seed: 1, spec_hash: specSha, content_hash: contentSha });
  });
});
