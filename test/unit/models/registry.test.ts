import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GraphBuilder, int, T } from "../../../src/modelgen/onnx-builder.ts";
import { ModelRegistry, readModelFolder, scanModels } from "../../../src/models/registry.ts";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { tinyModelDir, tinyOmniModelDir } from "../../helpers/tiny-model.ts";

/** A copy of a built-in model (the text one by default) whose kiln.json says `contextLength`. */
async function tinyCopy(contextLength: number, built = tinyModelDir): Promise<string> {
  const dir = join(tempDir(), "kiln-tiny-v1");
  cpSync(await built(), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
  writeFileSync(join(dir, "kiln.json"), JSON.stringify({ ...manifest, context_length: contextLength }));
  return dir;
}

/** A decoder graph whose rotary positions index a cos table of 4096 rows, as kiln's builds before builder 10 wrote. */
function tableGraph(): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input("x", T.FLOAT, [1, 1, 32]);
  for (const name of ["/rope/cos", "/rope/sin"]) g.inline(name, T.FLOAT, [4096, 16], new Uint8Array(4096 * 64));
  g.node("RotaryEmbedding", [x, g.input("position_ids", T.INT64, [1, 1]), "/rope/cos", "/rope/sin"], { num_heads: int(1) }, { domain: "com.microsoft", output: "y" });
  return g.encode("old");
}

describe("registry scan", () => {
  test("valid folders load; broken ones are skipped with a reason", () => {
    const dir = tempDir();
    writeFakeModel(dir, "good", fakeManifest("good-model-v1"));
    const noTok = writeFakeModel(dir, "no-tokenizer", fakeManifest("nt-model-v1"));
    rmSync(join(noTok, "tokenizer.json"));
    const badJson = writeFakeModel(dir, "bad-json", null);
    writeFileSync(join(badJson, "kiln.json"), "{ nope");
    writeFakeModel(dir, "z-dupe", fakeManifest("good-model-v1"));
    mkdirSync(join(dir, "empty-dir-1"));
    writeFileSync(join(dir, "stray-file.txt"), "x");

    const { models, problems } = scanModels(dir);
    expect(models.map((m) => m.id)).toEqual(["good-model-v1"]);
    const reasons = Object.fromEntries(problems.map((p) => [p.folder.split("/").pop(), p.reason]));
    expect(reasons["no-tokenizer"]).toBe("missing tokenizer.json");
    expect(reasons["bad-json"]).toStartWith("kiln.json is not valid JSON");
    expect(reasons["z-dupe"]).toContain('id "good-model-v1" is already served from');
    expect(reasons["empty-dir-1"]).toBe("missing config.json");
  });

  test("the built-in text model holds 131,072 positions: its own manifest loads, one promising more is refused with the bound", async () => {
    expect(readModelFolder(await tinyCopy(131_072), "kiln-tiny-v1").contextLength).toBe(131_072);
    const raised = await tinyCopy(262_144);
    expect(() => readModelFolder(raised, "kiln-tiny-v1")).toThrow(
      "kiln.json context_length 262144 is more than onnx/model.onnx holds (its metadata's max_position_embeddings is 131072): set kiln.json context_length to 131072 or less",
    );
    // In a scan it is a skipped folder with that reason, not a model that fails mid-generation.
    const { models, problems } = scanModels(join(raised, ".."));
    expect(models).toEqual([]);
    expect(problems[0]!.reason).toContain("kiln.json context_length 262144 is more than onnx/model.onnx holds");
  });

  test("the built-in multimodal model's decoder holds 131,072 positions too", async () => {
    expect(readModelFolder(await tinyCopy(131_072, tinyOmniModelDir), "kiln-tiny-omni-v1").contextLength).toBe(131_072);
    const raised = await tinyCopy(131_073, tinyOmniModelDir);
    expect(() => readModelFolder(raised, "kiln-tiny-omni-v1")).toThrow(
      "kiln.json context_length 131073 is more than onnx/decoder_model_merged.onnx holds (its metadata's max_position_embeddings is 131072)",
    );
  });

  test("a graph with a 4,096-row rotary table refuses a manifest (or config.json) promising 8,192 positions", () => {
    const dir = tempDir();
    const withManifest = writeFakeModel(dir, "a", fakeManifest("a-model-v1", { context_length: 8192 }));
    writeFileSync(join(withManifest, "onnx", "model.onnx"), tableGraph());
    expect(() => readModelFolder(withManifest, "a")).toThrow(
      'kiln.json context_length 8192 is more than onnx/model.onnx holds (its rotary cos cache "/rope/cos" has 4096 rows): set kiln.json context_length to 4096 or less',
    );
    const plain = writeFakeModel(dir, "plain-model-v1", null);
    writeFileSync(join(plain, "config.json"), JSON.stringify({ model_type: "llama", max_position_embeddings: 8192 }));
    writeFileSync(join(plain, "onnx", "model.onnx"), tableGraph());
    expect(() => readModelFolder(plain, "plain-model-v1")).toThrow("config.json max_position_embeddings 8192 is more than onnx/model.onnx holds");
    writeFileSync(join(plain, "config.json"), JSON.stringify({ model_type: "llama", max_position_embeddings: 4096 }));
    expect(readModelFolder(plain, "plain-model-v1").contextLength).toBe(4096);
  });

  test("a missing models dir is empty, not a crash", () => {
    expect(scanModels("/nonexistent/kiln/models")).toEqual({ models: [], problems: [] });
  });

  test("health changes are tracked", () => {
    const dir = tempDir();
    writeFakeModel(dir, "m", fakeManifest("m-model-v1"));
    const reg = new ModelRegistry(scanModels(dir).models);
    expect(reg.healthOf("m-model-v1").status).toBe("operational");
    expect(reg.healthChangedAt).toBeNull();
    // A cause, never free text: the message is one of the fixed public texts.
    reg.setHealth("m-model-v1", "degraded", "worker_restarted");
    expect(reg.healthOf("m-model-v1")).toEqual({ status: "degraded", message: "a worker was restarted" });
    expect(reg.healthChangedAt).not.toBeNull();
  });
});
