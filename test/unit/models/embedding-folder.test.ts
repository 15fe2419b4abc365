// Operator folders in the sentence-transformers layout are recognised at scan as embedding models: pooling and
// normalization read from modules.json and the Pooling module's config, the id from the folder name without kiln.json;
// layouts kiln cannot run the same way (a Dense module, several pooling modes) are skipped with the reason.
import { describe, expect, test } from "bun:test";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { poolingMode, readModules, truncations } from "../../../src/models/embedding-layout.ts";
import { scanModels } from "../../../src/models/registry.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { tinyEmbedModelDir } from "../../helpers/tiny-model.ts";

const ST = "sentence_transformers.models.";
const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A copy of the built-in model as an operator would have it: no kiln.json, under `name`, changed by `edit`. */
async function operatorFolder(name: string, edit: (dir: string) => void = () => {}): Promise<string> {
  const models = tempDir("kiln-embed-scan-");
  const dir = join(models, name);
  cpSync(await tinyEmbedModelDir(), dir, { recursive: true });
  rmSync(join(dir, "kiln.json"));
  edit(dir);
  return models;
}

describe("embedding folders at scan", () => {
  test("the layout without kiln.json: an embedding model named after its folder, mean pooling, normalized", async () => {
    const { models, problems } = scanModels(await operatorFolder("all-MiniLM-L6-v2"));
    expect(problems).toEqual([]);
    const m = models[0]!;
    expect([m.id, m.ownedBy, m.architecture, m.contextLength, m.dtypes]).toEqual(["all-minilm-l6-v2", "operator", "bert", 512, ["fp32"]]);
    expect(m.capabilities).toMatchObject({ chat: false, embeddings: true });
    expect(m.embedding).toEqual({ pooling: "mean", normalize: true, dimensions: 64, truncations: [64] });
  });

  test("cls pooling and no Normalize module are read as such", async () => {
    const dir = await operatorFolder("bge-small-v1", (d) => {
      const pooling = json(join(d, "1_Pooling/config.json"));
      writeFileSync(join(d, "1_Pooling/config.json"), JSON.stringify({ ...pooling, pooling_mode_mean_tokens: false, pooling_mode_cls_token: true }));
      writeFileSync(join(d, "modules.json"), JSON.stringify(json(join(d, "modules.json")).slice(0, 2)));
    });
    expect(scanModels(dir).models[0]!.embedding).toMatchObject({ pooling: "cls", normalize: false });
  });

  test("a Dense module is refused with the reason (kiln would return different vectors)", async () => {
    const dir = await operatorFolder("dense-embed-v1", (d) => {
      writeFileSync(join(d, "modules.json"), JSON.stringify([...json(join(d, "modules.json")), { idx: 3, name: "3", path: "3_Dense", type: `${ST}Dense` }]));
    });
    const { models, problems } = scanModels(dir);
    expect(models).toEqual([]);
    expect(problems[0]!.reason).toContain("Dense, which kiln does not run");
  });
});

describe("embedding layout parts", () => {
  test("poolingMode: exactly one mode kiln runs", () => {
    expect(poolingMode({ pooling_mode_lasttoken: true, pooling_mode_mean_tokens: false })).toBe("lasttoken");
    expect(() => poolingMode({ pooling_mode_mean_tokens: true, pooling_mode_cls_token: true })).toThrow(/exactly one/);
    expect(() => poolingMode({ pooling_mode_max_tokens: true })).toThrow(/not a pooling kiln runs/);
  });

  test("readModules finds the Pooling folder and a Normalize module", () => {
    expect(readModules([{ type: `${ST}Transformer`, path: "" }, { type: `${ST}Pooling`, path: "1_Pooling" }])).toEqual({ poolingPath: "1_Pooling", normalize: false });
    expect(() => readModules([{ type: `${ST}Transformer` }])).toThrow(/no Pooling module/);
  });

  test("truncations: the declared sizes and the full one, ascending; sizes past the full one refused", () => {
    expect(truncations(undefined, 64)).toEqual([64]);
    expect(truncations([32, 16], 64)).toEqual([16, 32, 64]);
    expect(() => truncations([128], 64)).toThrow(/from 1 to 64/);
  });
});
