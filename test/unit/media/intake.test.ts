// takeMedia with in-memory sources: the real decoder, fetcher and file store have their own tests; here, the order of
// checks, what each refusal names, and what ends up in the conversation.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ApiError } from "../../../src/errors/api-error.ts";
import type { Conversation, MediaPart } from "../../../src/inference/conversation.ts";
import type { CoreRequest } from "../../../src/inference/request.ts";
import { EMPTY_POLICY, parseContentPolicy } from "../../../src/media/content-policy.ts";
import { takeMedia } from "../../../src/media/intake.ts";
import { IntakeBudget } from "../../../src/media/intake-budget.ts";
import type { IntakeDeps } from "../../../src/media/intake-deps.ts";
import { base64Bytes, decodeBase64 } from "../../../src/media/intake-read.ts";
import { MAX_TEXT_DOCUMENT_BYTES, textDocument } from "../../../src/media/text-document.ts";
import { FetchRefusal, MediaDecodeError } from "../../../src/media/types.ts";
import type { DecodedMedia } from "../../../src/inference/media.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** A file in memory, opened as the Files storage would open one. */
const opened = (bytes: Uint8Array) => ({ size: bytes.length, head: async (n: number) => bytes.subarray(0, n), bytes: async () => bytes });

/** Decodes bytes starting with the PNG magic as a 1×1 image, "RIFF" as a clip, and refuses the rest as unknown. */
async function decode(bytes: Uint8Array, want: string): Promise<DecodedMedia> {
  if (!bytes.length) throw new MediaDecodeError("empty", "the file is empty");
  const isPng = PNG_MAGIC.every((b, i) => bytes[i] === b);
  const isWav = Buffer.from(bytes.subarray(0, 4)).toString() === "RIFF";
  if (isPng && (want === "image" || want === "any")) return { medium: "image", format: "png", width: 1, height: 1, bytes, sha256: sha(bytes) };
  if (isWav && (want === "audio" || want === "any")) return { medium: "audio", format: "wav", sampleRate: 16000, samples: new Float32Array(16), durationS: 0.001, sha256: sha(bytes) };
  if (want === "image" && (isWav || isPng)) throw new MediaDecodeError("not_image", "it is not an image");
  throw new MediaDecodeError("unknown_format", "no decoder recognises its format");
}

const png = Buffer.from([...PNG_MAGIC, 1, 2, 3]);
const wav = Buffer.from("RIFF....WAVE");

function deps(over: Partial<IntakeDeps> = {}): IntakeDeps {
  return {
    decode: (b, w) => decode(b, w),
    fetch: async (url) => {
      if (url === "https://img.test/a.png") return png;
      throw new FetchRefusal("blocked", `the fetch policy refused ${url}: 10.0.0.1 is a private address`);
    },
    openFile: async (who, id) => {
      if (who.teamId === 1 && id === "file-png") return opened(png);
      throw new ApiError(404, "invalid_request_error", `No file with id '${id}'.`, "file_not_found", "file_id");
    },
    policy: EMPTY_POLICY,
    inlineMaxBytes: 1000,
    fileMaxBytes: 1 << 20,
    fetchMaxBytes: 1 << 20,
    budget: new IntakeBudget(1 << 30, 1000),
    maxParts: 4,
    maxTotalBytes: 1 << 20,
    ...over,
  };
}

const vision = { id: "eyes-v1", capabilities: { vision: true, audio: false } };
const textOnly = { id: "text-v1", capabilities: { vision: false, audio: false } };
const media = (declared: MediaPart["declared"], source: MediaPart["source"], at = "input.0.content.0"): MediaPart => ({ type: "media", declared, source, at });
const conv = (...parts: MediaPart[]): Conversation => [{ role: "user", parts: [{ type: "text", text: "look" }, ...parts] }];
const b64 = (b: Uint8Array, type: string | null = "image/png") => ({ kind: "base64" as const, mediaType: type, data: Buffer.from(b).toString("base64") });

const signal = new AbortController().signal;
const WHO = { teamId: 1, keyId: 1 };
const req = (conversation: Conversation, tools: CoreRequest["tools"] = null) => ({ conversation, tools }) as CoreRequest;

describe("media intake", () => {
  test("inline, uploaded and fetched images decode into their parts, in place", async () => {
    const c = conv(media("image", b64(png)), media("image", { kind: "file", fileId: "file-png" }, "input.0.content.1"), media("image", { kind: "url", url: "https://img.test/a.png" }, "input.0.content.2"));
    await takeMedia(deps(), req(c), vision, WHO, signal);
    const parts = c[0]!.parts.slice(1) as MediaPart[];
    expect(parts.map((p) => [p.at, p.decoded?.medium, p.decoded?.sha256])).toEqual([
      ["input.0.content.0", "image", sha(png)], ["input.0.content.1", "image", sha(png)], ["input.0.content.2", "image", sha(png)],
    ]);
  });

  test("each refusal is a 400 (or the file's 404) naming the item", async () => {
    const cases: [MediaPart, number, string, string | null][] = [
      [media("image", b64(Buffer.from("hello"), "text/plain")), 400, "input.0.content.0 is a text/plain data URL, not an image", null],
      [media("image", b64(new Uint8Array(2000))), 400, "input.0.content.0 inlines 2000 bytes of media, above the 1000-byte limit for inline media; upload it through the Files API", null],
      [media("image", { kind: "base64", mediaType: "image/png", data: "not*base64!" }), 400, "input.0.content.0 is not valid base64.", null],
      [media("image", b64(new Uint8Array())), 400, "input.0.content.0: the file is empty", null],
      [media("image", b64(wav)), 400, "input.0.content.0: it is not an image", null],
      [media("image", { kind: "url", url: "http://10.0.0.1/x.png" }), 400, "input.0.content.0: the fetch policy refused http://10.0.0.1/x.png: 10.0.0.1 is a private address", null],
      [media("image", { kind: "file", fileId: "file-other" }), 404, "input.0.content.0: No file with id 'file-other'.", "file_not_found"],
      [media("audio", b64(wav, "wav")), 400, "input.0.content.0 is an audio clip, but the model 'eyes-v1' does not take audio input.", null],
    ];
    for (const [part, status, message, code] of cases) {
      const e = await apiRefusal(takeMedia(deps(), req(conv(part)), vision, WHO, signal));
      expect([e.status, e.param, e.code]).toEqual([status, "input.0.content.0", code]);
      expect(e.message).toStartWith(message);
    }
  });

  test("a medium the model cannot take is refused after it is read, so a broken one is reported as broken", async () => {
    const e = await apiRefusal(takeMedia(deps(), req(conv(media("image", b64(png)))), textOnly, WHO, signal));
    expect(e.message).toBe("input.0.content.0 is an image, but the model 'text-v1' does not take image input.");
    const broken = await apiRefusal(takeMedia(deps(), req(conv(media("image", b64(Buffer.from("garbage"))))), textOnly, WHO, signal));
    expect(broken.message).toBe("input.0.content.0: no decoder recognises its format");
  });

  test("an input file that is UTF-8 text becomes a text part framed with its name; binary junk is refused", async () => {
    const c = conv({ ...media("file", b64(Buffer.from("col\n1,2"), null)), filename: "t.csv" });
    await takeMedia(deps(), req(c), textOnly, WHO, signal);
    expect(c[0]!.parts[1]).toEqual({ type: "text", text: '<file name="t.csv">\ncol\n1,2\n</file>' });
    expect(textDocument(Buffer.from([0x61, 0, 0x62]), undefined)).toBeNull();
    expect(textDocument(Buffer.from([0xc3, 0x28]), undefined)).toBeNull();
    const e = await apiRefusal(takeMedia(deps(), req(conv(media("file", b64(Buffer.from([0xff, 0, 1]), null)))), textOnly, WHO, signal));
    expect(e.message).toBe("input.0.content.0: no decoder recognises its format");
  });

  test("the content policy refuses media by hash and prompts by pattern, text documents included", async () => {
    const policy = parseContentPolicy(JSON.stringify({ prompt_patterns: ["secret plan"], refused_media_sha256: [sha(png)] }));
    const byHash = await apiRefusal(takeMedia(deps({ policy }), req(conv(media("image", b64(png)))), vision, WHO, signal));
    expect([byHash.code, byHash.param]).toEqual(["content_policy_violation", "input.0.content.0"]);
    const byPrompt = await apiRefusal(takeMedia(deps({ policy }), req([{ role: "user", parts: [{ type: "text", text: "the SECRET PLAN" }] }]), vision, WHO, signal));
    expect([byPrompt.code, byPrompt.param]).toEqual(["content_policy_violation", null]);
    const inDocument = await apiRefusal(takeMedia(deps({ policy }), req(conv(media("file", b64(Buffer.from("my secret plan"), null)))), vision, WHO, signal));
    expect([inDocument.code, inDocument.param]).toEqual(["content_policy_violation", "input.0.content.0"]);
  });

  test("the prompt patterns see every string the client wrote: assistant turns, call arguments, tools", async () => {
    const policy = parseContentPolicy(JSON.stringify({ prompt_patterns: ["secret plan"] }));
    const assistant: Conversation = [{ role: "user", parts: [{ type: "text", text: "go on" }] }, { role: "assistant", parts: [{ type: "text", text: "the secret plan is" }] }];
    const call: Conversation = [{ role: "assistant", parts: [{ type: "tool_call", id: "c", name: "f", arguments: { q: "Secret Plan" } }] }];
    const tool = [{ type: "function" as const, function: { name: "f", description: "reveals the secret plan" } }];
    for (const r of [req(assistant), req(call), req([{ role: "user", parts: [{ type: "text", text: "hi" }] }], tool)]) {
      expect((await apiRefusal(takeMedia(deps({ policy }), r, vision, WHO, signal))).code).toBe("content_policy_violation");
    }
  });

  test("the request's media together are bounded, and a text document is bounded before it reaches the prompt", async () => {
    const parts = [0, 1].map((i) => media("image", b64(png), `messages.0.content.${i}`));
    const over = await apiRefusal(takeMedia(deps({ maxTotalBytes: png.length + 1 }), req(conv(...parts)), vision, WHO, signal));
    expect([over.param, over.message]).toEqual(["messages.0.content.1", `messages.0.content.1 brings the request's media past ${png.length + 1} bytes in all; send fewer or smaller media.`]);
    const big = Buffer.alloc(MAX_TEXT_DOCUMENT_BYTES + 1, "a");
    const doc = await apiRefusal(takeMedia(deps({ inlineMaxBytes: 8 << 20, maxTotalBytes: 8 << 20 }), req(conv(media("file", b64(big, null)))), textOnly, WHO, signal));
    expect(doc.message).toBe(`input.0.content.0 is a text document of ${MAX_TEXT_DOCUMENT_BYTES + 1} bytes; at most ${MAX_TEXT_DOCUMENT_BYTES} fit a prompt.`);
  });

  test("inline base64 is decoded strictly, in chunks, in either alphabet", async () => {
    const bytes = new Uint8Array(9 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    expect(Buffer.from((await decodeBase64(Buffer.from(bytes).toString("base64")))!).equals(Buffer.from(bytes))).toBe(true);
    expect(Array.from((await decodeBase64("_-8"))!)).toEqual([0xff, 0xef]);
    expect(Array.from((await decodeBase64("aGVs\nbG8=  "))!)).toEqual([...Buffer.from("hello")]);
    expect(await decodeBase64("not*base64!")).toBeNull();
  });

  test("more media than the per-request cap are refused before any is read", async () => {
    let reads = 0;
    const counting = deps({ decode: (b, w) => (reads++, decode(b, w)) });
    const parts = [0, 1, 2, 3, 4].map((i) => media("image", b64(png), `messages.0.content.${i}`));
    const e = await apiRefusal(takeMedia(counting, req(conv(...parts)), vision, WHO, signal));
    expect([e.param, reads]).toEqual(["messages.0.content.4", 0]);
  });

  test("base64 size is computed without decoding", () => {
    for (const n of [0, 1, 2, 3, 4, 100]) expect(base64Bytes(Buffer.alloc(n).toString("base64"))).toBe(n);
    expect(base64Bytes("aGVs\r\n bG8=")).toBe(5);
  });
});
