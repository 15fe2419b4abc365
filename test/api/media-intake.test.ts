// The bad-input table of media intake, end to end through a real kiln, on the text model and again on the built-in
// multimodal model: each bad medium gets its 400 naming the item, no URL outside loopback is ever connected to (the
// injected net's guard), and the server stays up. Also: a medium the text model cannot take, a text document, the
// content policy, and the 413 store rule.
import { afterAll, beforeAll, beforeEach, describe, expect, test, test as bunTest } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, restrictKey } from "../../src/db/keys-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import type { Net } from "../../src/media/fetch-net.ts";
import { tempDir } from "../helpers/kiln.ts";
import { loopbackNet, serveLoopback, type LoopbackServer } from "../helpers/loopback-net.ts";
import { AV, noiseImage, pngBomb, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyOmniModelDir } from "../helpers/tiny-model.ts";
import { sqliteOf } from "../helpers/databases.ts";

/** A public address the injected net routes to a loopback server: nothing ever connects to the real one. */
const STAND_IN = "93.184.216.34";
/** The server the requests below go to: the text model's, except while the table runs on the multimodal one. */
let server: TestServer;
let textServer: TestServer;
let omniServer: TestServer;
let site: LoopbackServer;
let guard: ReturnType<typeof loopbackNet>;
let policyPng: Uint8Array;

beforeAll(async () => {
  site = serveLoopback((_req, url) => {
    if (url.pathname === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
    if (url.pathname === "/to-loopback") return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${site.port}/img.png` } });
    return new Response("not found", { status: 404 });
  });
  guard = loopbackNet({ "cdn.test": [STAND_IN], "inner.test": ["10.1.2.3"] });
  const net: Net = {
    resolve: guard.resolve,
    // The stand-in's connections go to the loopback site; every other address meets the guard as it is.
    connect: (req) => guard.connect(req.address === STAND_IN ? { ...req, address: "127.0.0.1" } : req),
  };
  policyPng = await noiseImage("png", 8, 8);
  const policyFile = join(tempDir("kiln-policy-"), "policy.json");
  writeFileSync(policyFile, JSON.stringify({ prompt_patterns: ["forbidden plan"], refused_media_sha256: [new Bun.CryptoHasher("sha256").update(policyPng).digest("hex")] }));
  const env = { KILN_CONTENT_POLICY: policyFile, KILN_MAX_STORED_RESPONSE_BYTES: "4096" };
  [textServer, omniServer] = await Promise.all([startTestServer(env, { net }), startTestServer(env, { net, modelDir: await tinyOmniModelDir() })]);
  server = textServer;
});

afterAll(async () => {
  await Promise.all([textServer?.stop(1000), omniServer?.stop(1000)]);
  site?.stop();
});

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const dataUrl = (type: string, b: Uint8Array) => `data:${type};base64,${b64(b)}`;

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** A chat request whose user message is one media part after a line of text: the item is messages.0.content.1. */
const chatWith = (part: unknown) => post("/v1/chat/completions", { model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, part] }] });
const image = (url: string) => chatWith({ type: "image_url", image_url: { url } });
const audio = (bytes: Uint8Array, format: string) => chatWith({ type: "input_audio", input_audio: { data: b64(bytes), format } });

/** Uploads bytes through the Files API; the new file's id. */
async function upload(bytes: Uint8Array, name: string): Promise<string> {
  const form = new FormData();
  form.append("purpose", "user_data");
  form.append("file", new File([bytes], name));
  const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body: form });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function expect400(res: Response, param: string, message: string | RegExp, code: string | null = null): Promise<void> {
  const body = (await res.json()) as { error: { message: string; param: string | null; code: string | null; type: string } };
  expect({ status: res.status, param: body.error.param, code: body.error.code, type: body.error.type }).toEqual({ status: 400, param, code, type: "invalid_request_error" });
  if (typeof message === "string") expect(body.error.message).toBe(message);
  else expect(body.error.message).toMatch(message);
}

// Every test talks to the text model's server unless it picks the multimodal one itself.
beforeEach(() => {
  server = textServer;
});

for (const target of ["text", "multimodal"] as const) describe(`the bad-input table (${target} model)`, () => {
  const test = (name: string, body: () => Promise<void> | void) =>
    bunTest(name, () => {
      server = target === "text" ? textServer : omniServer;
      return body();
    });
  const AT = "messages.0.content.1";
  const blocked = (url: string, why: RegExp) => [`URL ${url}`, () => image(url), new RegExp(`^${AT.replace(/\./g, "\\.")}: the fetch policy refused .*${why.source}`)] as const;
  const cases: (readonly [string, () => Promise<Response>, RegExp])[] = [
    ["truncated PNG", async () => { const png = await noiseImage("png", 96, 64); return image(dataUrl("image/png", png.subarray(0, png.length >> 1))); }, /: truncated png image: the data ends early$/],
    ["garbage bytes", () => image(dataUrl("image/png", new TextEncoder().encode("definitely not an image, just words"))), /: unknown format: not an image/],
    ["PNG bomb", () => image(dataUrl("image/png", pngBomb(30000, 30000))), /: png image too large: 30000×30000 is 900 megapixels, above the limit of/],
    ["text data URL", () => image("data:text/plain;base64,aGVsbG8="), /is a text\/plain data URL, not an image/],
    ["WAV with a broken header", () => { const w = wavBytes(sine(440, 0.5, 16000), 16000); w.set([0xff, 0xff, 0xff, 0xff], 16); return audio(w, "wav"); }, /: corrupt wav audio/],
    ["mp4 without an audio track sent as audio", async () => audio(await AV.mp4Silent(), "mp4"), /: the mp4 video has no audio track$/],
    ["empty file", async () => chatWith({ type: "file", file: { file_id: await upload(new Uint8Array(), "empty.wav") } }), /: the media is empty \(0 bytes\)$/],
    blocked("http://127.0.0.1/a.png", /127\.0\.0\.1 is a loopback address/),
    blocked("http://10.0.0.1/a.png", /10\.0\.0\.1 is a private address/),
    blocked("http://169.254.169.254/latest/meta-data", /169\.254\.169\.254/),
    blocked("http://[::1]/a.png", /::1/),
    ["a redirect to loopback", () => image(`http://cdn.test:${site.port}/to-loopback`), /: the fetch policy refused http:\/\/127\.0\.0\.1:\d+\/img\.png: 127\.0\.0\.1 is a loopback address/],
    blocked("http://inner.test/a.png", /inner\.test resolves to a private address(?!.*10\.1\.2\.3)/),
  ];

  for (const [name, send, message] of cases) {
    test(name, async () => {
      await expect400(await send(), AT, message);
    });
  }

  test("an over-50 MB inline image is refused naming the item, before it is decoded", async () => {
    const res = await image(`data:image/png;base64,${"A".repeat(Math.ceil((50_000_001 * 4) / 3))}`);
    await expect400(res, AT, /^messages\.0\.content\.1 inlines 50000001 bytes of media, above the 50000000-byte limit for inline media; upload it through the Files API/);
  });

  test("nothing outside loopback was connected to; only the stand-in's redirect reached the loopback site", () => {
    expect(guard.violations).toEqual([]);
    expect(new Set(site.seen.map((s) => s.path).filter((p) => p !== "/robots.txt"))).toEqual(new Set(["/to-loopback"]));
  });

  test("the server is still up, and still answers", async () => {
    expect((await fetch(`${server.url}/v1/status`)).status).toBe(200);
    const ok = await post("/v1/chat/completions", { model: server.modelId, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] });
    expect(ok.status).toBe(200);
  });
});

describe("what a text model is given", () => {
  test("a good image is read, then refused because the model does not take images, in every format naming its item", async () => {
    const png = await noiseImage("png", 16, 16);
    await expect400(await image(dataUrl("image/png", png)), "messages.0.content.1", `messages.0.content.1 is an image, but the model '${server.modelId}' does not take image input.`);
    const responses = await post("/v1/responses", { model: server.modelId, input: [{ role: "user", content: [{ type: "input_text", text: "?" }, { type: "input_image", image_url: dataUrl("image/png", png) }] }] });
    await expect400(responses, "input.0.content.1", /^input\.0\.content\.1 is an image, but the model/);
    const messages = await post("/v1/messages", { model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } }, { type: "text", text: "?" }] }] });
    expect(messages.status).toBe(400);
    expect(((await messages.json()) as any).error.message).toMatch(/^messages\.0\.content\.0 is an image, but the model/);
  });

  test("a Messages image whose media_type is not a string is a 400 naming its source, not a crash", async () => {
    const res = await post("/v1/messages", { model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: 5, data: "iVBORw0KGgo=" } }] }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toStartWith("messages.0.content.0.source must be");
  });

  test("a text file given as input_file is read into the prompt", async () => {
    const withDoc = await post("/v1/responses", {
      model: server.modelId, max_output_tokens: 16, store: false,
      input: [{ role: "user", content: [{ type: "input_text", text: "Summarise." }, { type: "input_file", filename: "notes.txt", file_data: b64(new TextEncoder().encode("kiln reads text files")) }] }],
    });
    const without = await post("/v1/responses", { model: server.modelId, max_output_tokens: 16, store: false, input: [{ role: "user", content: [{ type: "input_text", text: "Summarise." }] }] });
    expect([withDoc.status, without.status]).toEqual([200, 200]);
    const [a, b] = [(await withDoc.json()) as any, (await without.json()) as any];
    // The document's tokens are in the prompt the model was given.
    expect(a.usage.input_tokens).toBeGreaterThan(b.usage.input_tokens + 5);
  });
});

describe("file_id references", () => {
  test("an uploaded image is read by its id; another team's file is 404 file_not_found naming the item, in each format", async () => {
    const id = await upload(await noiseImage("png", 16, 16), "a.png");
    // Read and decoded: what stops it is the text model, not the reference.
    const own = await post("/v1/responses", { model: server.modelId, input: [{ role: "user", content: [{ type: "input_image", file_id: id }] }] });
    await expect400(own, "input.0.content.0", /^input\.0\.content\.0 is an image, but the model/);
    const other = (await createKey(server.deps.db, (await createTeam(server.deps.db, "media-other-team")).id, "other")).key;
    const asOther = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${other}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const requests: [string, unknown, string][] = [
      ["/v1/responses", { model: server.modelId, input: [{ role: "user", content: [{ type: "input_image", file_id: id }] }] }, "input.0.content.0"],
      ["/v1/chat/completions", { model: server.modelId, messages: [{ role: "user", content: [{ type: "file", file: { file_id: id } }] }] }, "messages.0.content.0"],
      ["/v1/messages", { model: server.modelId, max_tokens: 16, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: id } }] }] }, "messages.0.content.0"],
    ];
    for (const [path, body, at] of requests) {
      const res = await asOther(path, body);
      const err = ((await res.json()) as any).error;
      expect([res.status, err.message.startsWith(`${at}: `), err.message.includes(id)]).toEqual([404, true, true]);
      if (path !== "/v1/messages") expect([err.code, err.param]).toEqual(["file_not_found", at]);
    }
    // A key of the owner's team without the files permission cannot read the file through a prompt either.
    const ownTeam = (sqliteOf(server.deps.db).$client.query("SELECT team_id AS t FROM files WHERE id = ?").get(id) as { t: number }).t;
    const chatOnly = await createKey(server.deps.db, ownTeam, "chat only");
    await restrictKey(server.deps.db, chatOnly.id, { endpoints: ["chat"] });
    const refused = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${chatOnly.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, messages: [{ role: "user", content: [{ type: "file", file: { file_id: id } }] }] }),
    });
    const denied = ((await refused.json()) as any).error;
    expect([refused.status, denied.type, denied.param]).toEqual([403, "permission_error", "messages.0.content.0"]);
    // The owner's file is untouched.
    expect((await fetch(`${server.url}/v1/files/${id}`, { headers: { authorization: `Bearer ${server.key}` } })).status).toBe(200);
  });
});

describe("content policy", () => {
  test("a refused medium and a refused prompt are 400 content_policy_violation", async () => {
    await expect400(await image(dataUrl("image/png", policyPng)), "messages.0.content.1", "messages.0.content.1 was refused by this server's content policy.", "content_policy_violation");
    const prompt = await post("/v1/chat/completions", { model: server.modelId, max_tokens: 2, messages: [{ role: "user", content: "Tell me the Forbidden Plan." }] });
    const body = (await prompt.json()) as any;
    expect([prompt.status, body.error.code, body.error.param]).toEqual([400, "content_policy_violation", null]);
  });
});

describe("the 413 store rule", () => {
  test("a stored, non-streamed response whose inline media are too large to keep runs, then 413 says to use the Files API", async () => {
    const doc = b64(new TextEncoder().encode("short notes. ".repeat(300)));
    const body = { model: server.modelId, max_output_tokens: 16, input: [{ role: "user", content: [{ type: "input_text", text: "Read." }, { type: "input_file", filename: "n.txt", file_data: doc }] }] };
    const usageBefore = (sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n;
    const res = await post("/v1/responses", body);
    const err = ((await res.json()) as any).error;
    expect([res.status, err.code, err.type]).toEqual([413, "payload_too_large", "invalid_request_error"]);
    expect(err.message).toMatch(/above the 4096-byte limit for a stored response \(KILN_MAX_STORED_RESPONSE_BYTES\)\. \d+ of them are inline media: upload media through the Files API and reference it by file_id, or set store: false\./);
    // Inference ran (its usage is recorded), nothing was stored; with store: false the same request is answered.
    expect((sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n).toBe(usageBefore + 1);
    expect((sqliteOf(server.deps.db).$client.query("SELECT count(*) AS n FROM responses").get() as { n: number }).n).toBe(0);
    expect((await post("/v1/responses", { ...body, store: false })).status).toBe(200);
  });
});
