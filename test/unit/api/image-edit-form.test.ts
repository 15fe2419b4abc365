// The multipart form of an image edit: files as `image` / repeated `image[]` / `mask`, text fields converted and checked
// like the JSON form, undeclared fields named, limits enforced.
import { describe, expect, test } from "bun:test";
import { readEditForm } from "../../../src/api/images/edit-form.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";

const LIMITS = { maxBodyBytes: 1 << 20, timeoutMs: 5000, maxFileBytes: 1000, maxImages: 3 };

/** The form as a client sends it: a body stream and its Content-Type with the boundary. */
async function send(entries: [string, string | Blob, string?][], limits = LIMITS) {
  const form = new FormData();
  for (const [name, value, filename] of entries) {
    if (typeof value === "string") form.append(name, value);
    else form.append(name, value, filename ?? "f.png");
  }
  const req = new Request("http://x/", { method: "POST", body: form });
  return readEditForm(req.body, req.headers.get("content-type"), limits);
}

const png = (n: number) => new Blob([new Uint8Array(n).fill(7)]);

describe("image edit forms", () => {
  test("one image, or several as image[] in order; the mask; numeric fields become numbers", async () => {
    const one = await send([["model", "m-v1"], ["prompt", "p"], ["n", "2"], ["image", png(3), "a.png"], ["mask", png(2), "m.png"], ["output_compression", "90"], ["output_format", "jpeg"]]);
    expect(one.fields).toEqual({ model: "m-v1", prompt: "p", n: 2, output_compression: 90, output_format: "jpeg" });
    expect(one.images.map((p) => [p.at, p.filename, p.source.kind === "upload" && p.source.bytes.length])).toEqual([["image", "a.png", 3]]);
    expect(one.mask?.at).toBe("mask");
    const many = await send([["image[]", png(1), "1.png"], ["prompt", "p"], ["image[]", png(2), "2.png"], ["model", "m-v1"]]);
    expect(many.images.map((p) => p.at)).toEqual(["image[0]", "image[1]"]);
    expect(many.mask).toBeNull();
  });

  test("refusals name the field: undeclared, missing, malformed, duplicated, too many or too large", async () => {
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1)], ["style", "vivid"]]))).toMatchObject({ status: 400, param: "style", message: "Unrecognized request argument supplied: style" });
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"]]))).toMatchObject({ status: 400, param: "image" });
    expect(await apiRefusal(send([["model", "m-v1"], ["image", png(1)]]))).toMatchObject({ status: 400, param: "prompt", message: "Missing required parameter: 'prompt'." });
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1)], ["n", "two"]]))).toMatchObject({ status: 400, param: "n" });
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1)], ["image", png(1)]]))).toMatchObject({ status: 400, param: "image" });
    expect(await apiRefusal(send([["model", "m-v1"], ["model", "m-v2"], ["prompt", "p"], ["image", png(1)]]))).toMatchObject({ status: 400, param: "model" });
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ...Array.from({ length: 4 }, () => ["image[]", png(1)] as [string, Blob])]))).toMatchObject({ status: 400, param: "image[3]" });
    // One `image` beside `image[]` parts: the part past the limit is named by its own list.
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1)], ...Array.from({ length: 3 }, () => ["image[]", png(1)] as [string, Blob])]))).toMatchObject({ status: 400, param: "image[2]" });
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1001)]]))).toMatchObject({ status: 400, param: "image" });
  });

  test("a form of many parts is refused at the first part past what an edit can hold, before the rest of the body is read", async () => {
    const enc = new TextEncoder();
    const part = (name: string, value = "x") => enc.encode(`--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    /** 10,000 chunks of 100 parts each; counts the chunks the reader pulled. */
    const endless = (name: (i: number) => string) => {
      const seen = { pulled: 0 };
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (seen.pulled === 10_000) return c.close();
          const parts = Array.from({ length: 100 }, (_, i) => part(name(seen.pulled * 100 + i)));
          seen.pulled++;
          c.enqueue(new Uint8Array(Buffer.concat(parts)));
        },
      }, { highWaterMark: 0 });
      return { stream, seen };
    };
    const undeclared = endless((i) => `field${i}`);
    expect(await apiRefusal(readEditForm(undeclared.stream, "multipart/form-data; boundary=b", LIMITS))).toMatchObject({ status: 400, param: "field0" });
    expect(undeclared.seen.pulled).toBeLessThan(3);
    const images = endless(() => "image[]");
    expect(await apiRefusal(readEditForm(images.stream, "multipart/form-data; boundary=b", LIMITS))).toMatchObject({ status: 400, param: "image[3]" });
    expect(images.seen.pulled).toBeLessThan(3);
  });

  test("a mask does not count against the images: the most images and a mask are read", async () => {
    const form = await send([["model", "m-v1"], ["prompt", "p"], ...Array.from({ length: 3 }, () => ["image[]", png(1)] as [string, Blob]), ["mask", png(1)]]);
    expect([form.images.length, form.mask?.at]).toEqual([3, "mask"]);
  });

  test("the prompt field takes a long prompt in multi-byte characters (its character limit, not the 64 KiB field cap)", async () => {
    const prompt = "漢".repeat(30_000);
    expect((await send([["model", "m-v1"], ["prompt", prompt], ["image", png(1)]])).fields.prompt).toBe(prompt);
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(1)], ["user", "u".repeat(70_000)]]))).toMatchObject({ status: 400, param: "user" });
  });

  test("a body past the limit is a 413; a form cut short is a 400", async () => {
    expect(await apiRefusal(send([["model", "m-v1"], ["prompt", "p"], ["image", png(900)]], { ...LIMITS, maxBodyBytes: 500 }))).toMatchObject({ status: 413, code: "payload_too_large" });
    const cut = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(new TextEncoder().encode('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nm')); c.close(); } });
    expect(await apiRefusal(readEditForm(cut, "multipart/form-data; boundary=b", LIMITS))).toMatchObject({ status: 400, message: expect.stringContaining("malformed") });
  });
});
