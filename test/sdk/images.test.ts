// The Images API end to end: the official openai client, unmodified, against a real kiln serving the built-in image
// model (kiln-tiny-image-v1). Generations at several aspect ratios and formats; edits of one image, of two composed
// into one canvas, with a mask (pixels outside it kept exactly), and as JSON by file_id and by image_url (a loopback
// fixture server under the test-only fetch switch); the 400s the spec lists; usage rows, per-image charges and the
// 402 that comes before any render.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import sharp from "sharp";
import { credit, ledgerOf, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { loopbackNet, serveLoopback, type LoopbackServer } from "../helpers/loopback-net.ts";
import { noiseImage } from "../helpers/media-fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyImageModelDir } from "../helpers/tiny-model.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let openai: OpenAI;
let site: LoopbackServer;
const guard = loopbackNet({ "images.test": ["127.0.0.1"] });
let red: Uint8Array;

/** A solid PNG (RGB, or RGBA with alpha from `alpha(x, y)`). */
async function solid(width: number, height: number, rgb: [number, number, number], alpha?: (x: number, y: number) => number): Promise<Uint8Array> {
  const channels = alpha ? 4 : 3;
  const raw = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      raw.set(rgb, (y * width + x) * channels);
      if (alpha) raw[(y * width + x) * channels + 3] = alpha(x, y);
    }
  }
  return new Uint8Array(await sharp(raw, { raw: { width, height, channels } }).png().toBuffer());
}

beforeAll(async () => {
  red = await solid(128, 128, [220, 30, 30]);
  const text = new TextEncoder().encode("not an image at all\n");
  site = serveLoopback((_req, url) => {
    if (url.pathname === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
    if (url.pathname === "/red.png") return new Response(red, { headers: { "content-type": "image/png" } });
    if (url.pathname === "/page.txt") return new Response(text, { headers: { "content-type": "text/plain" } });
    return new Response("not found", { status: 404 });
  });
  const policy = join(tempDir("kiln-policy-"), "policy.json");
  writeFileSync(policy, JSON.stringify({ prompt_patterns: ["forbidden scene"] }));
  server = await startTestServer({ KILN_CONTENT_POLICY: policy }, { modelDir: await tinyImageModelDir(), net: guard, fetchPolicy: { allowLoopback: true } });
  openai = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await server?.stop(1000);
  site?.stop();
  expect(guard.violations).toEqual([]);
});

const decode = (b64: string) => sharp(Buffer.from(b64, "base64"));
const pixelsOf = async (b64: string) => new Uint8Array(await decode(b64).removeAlpha().raw().toBuffer());

function lastUsage(): Record<string, unknown> {
  return sqliteOf(server.deps.db).$client.query("SELECT endpoint, status, images, input_tokens AS tokens, cost_micros AS cost, request_id AS request FROM usage ORDER BY id DESC LIMIT 1").get() as Record<string, unknown>;
}

async function apiError(p: Promise<unknown>): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null }; headers: Headers }> {
  try {
    await p;
  } catch (e) {
    const err = e as InstanceType<typeof OpenAI.APIError>;
    return { status: err.status as number, error: err.error as never, headers: err.headers as unknown as Headers };
  }
  throw new Error("expected the call to fail");
}

describe("the built-in image model", () => {
  test("is listed with image generation, its per-image price, sizes and steps", async () => {
    const m = (await openai.models.retrieve(server.modelId)) as unknown as Record<string, unknown>;
    expect(m.capabilities).toMatchObject({ chat: false, image_generation: true });
    expect(m.pricing).toMatchObject({ per_image: 0.01 });
    expect(m.images).toMatchObject({ resolution: 128, edits: true, sizes: expect.objectContaining({ "1:1": "128x128", "2:1": "192x96", "1:2": "96x192" }) });
  });
});

describe("images.generate", () => {
  test("n 2 at 1024x512: two decodable ~2:1 PNGs, usage with the prompt tokens and the images, one usage row charged 0.01 each", async () => {
    const r = await openai.images.generate({ model: server.modelId, prompt: "a lighthouse at dusk", n: 2, size: "1024x512" });
    expect(r.data).toHaveLength(2);
    expect(r.size).toBe("192x96");
    for (const d of r.data!) {
      const meta = await decode(d.b64_json!).metadata();
      expect([meta.format, meta.width! / meta.height!]).toEqual(["png", 2]);
    }
    // (Bun's toMatchObject writes its asymmetric matchers into the object it checks: plain values only here.)
    const tokens = r.usage!.input_tokens;
    expect(tokens).toBeGreaterThan(2);
    expect(r.usage).toEqual({ input_tokens: tokens, input_tokens_details: { text_tokens: tokens, image_tokens: 0 }, output_tokens: 0, total_tokens: tokens, images: 2 } as never);
    expect(lastUsage()).toMatchObject({ endpoint: "images", status: "completed", images: 2, tokens, cost: 20_000 });
  });

  test("512x1024 is ~1:2; jpeg and webp bytes when asked, with output_compression", async () => {
    const tall = await openai.images.generate({ model: server.modelId, prompt: "a tower", size: "512x1024" });
    const meta = await decode(tall.data![0]!.b64_json!).metadata();
    expect([meta.width, meta.height]).toEqual([96, 192]);
    for (const format of ["jpeg", "webp"] as const) {
      const r = await openai.images.generate({ model: server.modelId, prompt: "a tower", output_format: format, output_compression: 80 });
      expect(r.output_format).toBe(format);
      expect((await decode(r.data![0]!.b64_json!).metadata()).format).toBe(format);
    }
  });

  test("the same seed gives the same image; another seed another", async () => {
    const ask = (seed: number) => openai.images.generate({ model: server.modelId, prompt: "a fox", seed } as OpenAI.ImageGenerateParams);
    const [a, b, c] = (await Promise.all([ask(42), ask(42), ask(43)])) as [OpenAI.ImagesResponse, OpenAI.ImagesResponse, OpenAI.ImagesResponse];
    expect(a.data![0]!.b64_json).toBe(b.data![0]!.b64_json!);
    expect(a.data![0]!.b64_json).not.toBe(c.data![0]!.b64_json!);
  });
});

describe("images.edit", () => {
  test("one uploaded PNG: one image at the upload's ratio", async () => {
    const wide = await solid(200, 100, [10, 120, 200]);
    const r = await openai.images.edit({ model: server.modelId, prompt: "add snow", image: await toFile(wide, "wide.png") });
    expect(r.size).toBe("192x96");
    expect(r.data).toHaveLength(1);
    expect(lastUsage()).toMatchObject({ endpoint: "images", status: "completed", images: 1, cost: 10_000 });
  });

  test("a mask: every pixel outside it equals the input's, inside it the model drew", async () => {
    const mask = await solid(128, 128, [0, 0, 0], (x) => (x < 64 ? 0 : 255));
    const r = await openai.images.edit({ model: server.modelId, prompt: "a window", image: await toFile(red, "red.png"), mask: await toFile(mask, "mask.png") });
    expect(r.size).toBe("128x128");
    const out = await pixelsOf(r.data![0]!.b64_json!);
    let kept = true;
    let changed = 0;
    for (let y = 0; y < 128; y++) {
      for (let x = 0; x < 128; x++) {
        const p = out.subarray((y * 128 + x) * 3, (y * 128 + x) * 3 + 3);
        const same = p[0] === 220 && p[1] === 30 && p[2] === 30;
        if (x >= 64) kept &&= same;
        else if (!same) changed++;
      }
    }
    expect(kept).toBe(true);
    expect(changed).toBeGreaterThan(64 * 128 * 0.5);
  });

  test("two images as image[] are composed into one 2:1 canvas: with a mask on the first, the second stays exactly where it was placed", async () => {
    const blue = await solid(128, 128, [20, 40, 230]);
    const mask = await solid(128, 128, [0, 0, 0], () => 0);
    const r = await openai.images.edit({ model: server.modelId, prompt: "a red and a blue square", image: [await toFile(red, "a.png"), await toFile(blue, "b.png")], mask: await toFile(mask, "m.png") });
    expect(r.data).toHaveLength(1);
    expect(r.size).toBe("192x96");
    const out = await pixelsOf(r.data![0]!.b64_json!);
    // The second image fills the right half (96×96 from x = 96); the first, all masked, was redrawn.
    expect([...out.subarray((48 * 192 + 150) * 3, (48 * 192 + 150) * 3 + 3)]).toEqual([20, 40, 230]);
    expect([...out.subarray((48 * 192 + 40) * 3, (48 * 192 + 40) * 3 + 3)]).not.toEqual([220, 30, 30]);
  });

  test("JSON edits by file_id and by image_url (a loopback fixture server), n 2", async () => {
    const file = await openai.files.create({ file: await toFile(red, "red.png"), purpose: "user_data" });
    const byFile = (await openai.post("/images/edits", { body: { model: server.modelId, prompt: "night", images: [{ file_id: file.id }], n: 2 } })) as OpenAI.ImagesResponse;
    expect(byFile.data).toHaveLength(2);
    expect(lastUsage()).toMatchObject({ images: 2, cost: 20_000 });
    const url = site.url("images.test", "/red.png");
    const byUrl = (await openai.post("/images/edits", { body: { model: server.modelId, prompt: "night", images: [{ image_url: url }], size: "1024x1024" } })) as OpenAI.ImagesResponse;
    expect(byUrl.size).toBe("128x128");
    expect(site.seen.some((s) => s.path === "/red.png")).toBe(true);
  });
});

describe("refusals", () => {
  test("an undeclared field is a 400 naming it; no prompt is a 400 on prompt", async () => {
    const style = await apiError(openai.images.generate({ model: server.modelId, prompt: "x", style: "vivid" }));
    expect([style.status, style.error.param, style.error.message]).toEqual([400, "style", "Unrecognized request argument supplied: style"]);
    const edit = await apiError(openai.images.edit({ model: server.modelId, prompt: "x", image: await toFile(red, "r.png"), moderation: "low" } as never));
    expect([edit.status, edit.error.param]).toEqual([400, "moderation"]);
    const missing = await apiError(openai.images.generate({ model: server.modelId } as never));
    expect([missing.status, missing.error.param, missing.error.code]).toEqual([400, "prompt", null]);
  });

  test("a data: URL of text is a 400 on images[0].image_url; so is a fetched page that is not an image", async () => {
    const text = await apiError(openai.post("/images/edits", { body: { model: server.modelId, prompt: "x", images: [{ image_url: "data:text/plain;base64,aGVsbG8=" }] } }));
    expect([text.status, text.error.param, text.error.type]).toEqual([400, "images[0].image_url", "invalid_request_error"]);
    const page = await apiError(openai.post("/images/edits", { body: { model: server.modelId, prompt: "x", images: [{ image_url: site.url("images.test", "/page.txt") }] } }));
    expect([page.status, page.error.param]).toEqual([400, "images[0].image_url"]);
    const gone = await apiError(openai.post("/images/edits", { body: { model: server.modelId, prompt: "x", images: [{ image_url: site.url("images.test", "/missing.png") }] } }));
    expect([gone.status, gone.error.param]).toEqual([400, "images[0].image_url"]);
    expect(gone.error.message).toMatch(/404|unreachable|fetch/i);
  });

  test("a corrupt PNG is a 400 naming the image, with code null", async () => {
    const png = await noiseImage("png", 32, 32);
    const broken = png.slice(0, png.length - 40);
    const r = await apiError(openai.images.edit({ model: server.modelId, prompt: "x", image: [await toFile(red, "ok.png"), await toFile(broken, "broken.png")] }));
    expect([r.status, r.error.param, r.error.code]).toEqual([400, "image[1]", null]);
    expect(r.error.message).toMatch(/^image\[1\]: (truncated|corrupt) png image/);
  });

  test("a prompt the content policy refuses is 400 content_policy_violation", async () => {
    const gen = await apiError(openai.images.generate({ model: server.modelId, prompt: "a forbidden scene" }));
    expect([gen.status, gen.error.code, gen.error.param]).toEqual([400, "content_policy_violation", "prompt"]);
    const edit = await apiError(openai.images.edit({ model: server.modelId, prompt: "a forbidden scene", image: await toFile(red, "r.png") }));
    expect([edit.status, edit.error.code]).toEqual([400, "content_policy_violation"]);
  });
});

describe("billing", () => {
  test("a billed team is charged 0.01 × n in the ledger beside the usage row; a balance that cannot cover n images is a 402 before any render", async () => {
    const db = server.deps.db;
    const team = await createTeam(db, "image-buyers");
    const key = await createKey(db, team.id, "images");
    await setBillingEnabled(db, team.id, true);
    await credit(db, team.id, 25_000, "two images and a half");
    const billed = new OpenAI({ apiKey: key.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
    await billed.images.generate({ model: server.modelId, prompt: "a coin", n: 2 });
    const charge = lastUsage();
    expect(charge).toMatchObject({ images: 2, cost: 20_000 });
    expect((await ledgerOf(db, team.id, 5))[0]).toMatchObject({ amountMicros: -20_000, requestId: charge.request });
    const before = (sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n;
    const refused = await apiError(billed.images.generate({ model: server.modelId, prompt: "a coin", n: 1 }));
    expect([refused.status, refused.error.type, refused.error.code]).toEqual([402, "billing_error", "billing_not_configured"]);
    expect(refused.error.message).toContain("1 image of");
    // Nothing was queued or recorded for it.
    expect((sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n).toBe(before);
    expect(server.runtime.scheduler.load()).toEqual({ waiting: 0, active: 0 });
  });
});
