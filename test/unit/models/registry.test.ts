import { describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ModelRegistry, scanModels } from "../../../src/models/registry.ts";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";

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
