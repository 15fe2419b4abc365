// The images endpoints' own validation through the app (no worker needed: every refusal comes before a render):
// each field's own message, undeclared fields named (at the top and inside an edit's items), items named as
// images[i], and the count of images bounded before the body's items are walked.
import { describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { testKiln } from "../helpers/kiln.ts";
import { tinyImageModelDir } from "../helpers/tiny-model.ts";

const k = await testKiln({ modelsDir: dirname(await tinyImageModelDir()) });
const MODEL = "kiln-tiny-image-v1";
const PNG = "data:image/png;base64,iVBORw0KGgo=";

async function error(path: string, json: unknown): Promise<{ status: number; type: string; message: string; param: string | null; code: string | null }> {
  const res = await k.req(path, { method: "POST", json });
  const body = (await res.json()) as { error: { type: string; message: string; param: string | null; code: string | null } };
  return { status: res.status, ...body.error };
}

describe("images validation", () => {
  test("each field's own message, whether the field may be null or not", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ n: 0 }, "n", "n must be a whole number from 1 to 10"],
      [{ n: "2" }, "n", "n must be a whole number from 1 to 10"],
      [{ quality: "ultra" }, "quality", "quality must be one of auto, low, medium, high, standard, hd"],
      [{ output_format: "gif" }, "output_format", "output_format must be one of png, jpeg, webp"],
      [{ output_compression: 101, output_format: "jpeg" }, "output_compression", "output_compression must be a whole number from 0 to 100"],
      [{ seed: -1 }, "seed", "seed must be a whole number from 0 to 4294967295"],
      [{ size: 7 }, "size", "size must be <width>x<height> (for example 1024x1024) or auto"],
      [{ prompt: "" }, "prompt", "prompt must be a non-empty string of at most 32000 characters"],
    ];
    for (const [over, param, message] of cases) {
      expect(await error("/v1/images/generations", { model: MODEL, prompt: "a boat", ...over })).toEqual({ status: 400, type: "invalid_request_error", param, message, code: null });
    }
    // null is "unset", as the official client sends it.
    expect((await error("/v1/images/generations", { model: MODEL, prompt: "a boat", n: null, style: "x" })).param).toBe("style");
  });

  test("an edit's items are named images[i]: an undeclared key inside one, both or neither reference, a bad mask", async () => {
    const edit = (images: unknown, more: Record<string, unknown> = {}) => error("/v1/images/edits", { model: MODEL, prompt: "p", images, ...more });
    expect(await edit([{ image_url: PNG, detail: "high" }])).toMatchObject({ status: 400, param: "images[0].detail", message: "Unrecognized request argument supplied: images[0].detail" });
    expect(await edit([{ image_url: PNG }, { image_url: PNG, file_id: "file-abc" }])).toMatchObject({ status: 400, param: "images[1]" });
    expect(await edit([{}])).toMatchObject({ status: 400, param: "images[0]" });
    expect(await edit([{ image_url: 7 }])).toMatchObject({ status: 400, param: "images[0].image_url", message: "image_url must be a non-empty string" });
    expect(await edit([{ image_url: PNG }], { mask: { url: PNG } })).toMatchObject({ status: 400, param: "mask.url", message: "Unrecognized request argument supplied: mask.url" });
    expect(await edit([{ image_url: PNG }], { mask: { image_url: 7 } })).toMatchObject({ status: 400, param: "mask.image_url", message: "image_url must be a non-empty string" });
    expect(await edit([{ image_url: PNG }], { mask: "x" })).toMatchObject({ status: 400, param: "mask", message: 'each image must be {"image_url": …} or {"file_id": …}' });
    expect(await edit([])).toMatchObject({ status: 400, param: "images" });
  });

  test("more images than a request reads is refused from the count alone, naming the first one past it", async () => {
    const many = Array.from({ length: 100_000 }, () => ({ image_url: PNG, extra: 1 }));
    expect(await error("/v1/images/edits", { model: MODEL, prompt: "p", images: many })).toMatchObject({ status: 400, param: "images[16]" });
  });
});
