import { describe, expect, test } from "bun:test";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

describe("models", async () => {
  const dir = tempDir();
  writeFakeModel(dir, "a", fakeManifest("alpha-model-v1"));
  writeFakeModel(dir, "b", fakeManifest("beta-model-v2", { context_length: 8192 }));
  const k = await testKiln({ modelsDir: dir });

  test("list in the OpenAI shape", async () => {
    const body: any = await (await k.req("/v1/models")).json();
    expect(body.object).toBe("list");
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["alpha-model-v1", "beta-model-v2"]);
    expect(body.data[1]).toMatchObject({ id: "beta-model-v2", object: "model", created: 1767225600, owned_by: "kiln", context_length: 8192 });
  });

  test("retrieve one, and model_not_found", async () => {
    expect(((await (await k.req("/v1/models/alpha-model-v1")).json()) as any).id).toBe("alpha-model-v1");
    const res = await k.req("/v1/models/gamma-model-v9");
    expect(res.status).toBe(404);
    expect((await res.json()) as any).toEqual({
      error: { message: "The model 'gamma-model-v9' does not exist", type: "invalid_request_error", param: "model", code: "model_not_found" },
    });
  });
});
