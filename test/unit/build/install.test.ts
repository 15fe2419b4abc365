// ensureDefaultModel: builds once into the models dir, skips identical builds, repairs damaged ones; the registry accepts it.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MODEL_ID, ensureDefaultModel } from "../../../build/model/index.ts";
import { scanModels } from "../../../src/models/registry.ts";

const modelsDir = mkdtempSync(join(tmpdir(), "kiln-ensure-"));
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

describe("ensureDefaultModel", () => {
  test("builds the default model, then leaves an identical build alone", async () => {
    const dir = await ensureDefaultModel(modelsDir);
    expect(dir).toBe(join(modelsDir, DEFAULT_MODEL_ID));
    const before = statSync(join(dir, "onnx/model.onnx_data")).mtimeMs;
    expect(await ensureDefaultModel(modelsDir)).toBe(dir);
    expect(statSync(join(dir, "onnx/model.onnx_data")).mtimeMs).toBe(before);
    expect(readdirSync(modelsDir)).toEqual([DEFAULT_MODEL_ID]); // no temp folders left behind
    const { models, problems } = scanModels(modelsDir);
    expect(problems).toEqual([]);
    expect(models.map((m) => [m.id, m.defaultDtype, m.batching.leftPadding])).toEqual([[DEFAULT_MODEL_ID, "fp32", "exact"]]);
  });

  test("rebuilds a damaged folder", async () => {
    const dir = join(modelsDir, DEFAULT_MODEL_ID);
    const size = statSync(join(dir, "tokenizer.json")).size;
    appendFileSync(join(dir, "tokenizer.json"), " ");
    await ensureDefaultModel(modelsDir);
    expect(statSync(join(dir, "tokenizer.json")).size).toBe(size);
    expect(readdirSync(modelsDir)).toEqual([DEFAULT_MODEL_ID]);
  });
});
