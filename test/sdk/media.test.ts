// Media input end to end: the official openai and @anthropic-ai/sdk clients, unmodified, against a real kiln serving
// the built-in multimodal model (kiln-tiny-omni-v1). Images, audio and a video with sound in each format's own shape,
// streamed and not; their rows counted as prompt tokens (and the count endpoints agreeing, inline or by file_id); an
// image request and a text request sharing one decode batch, as the workers' own record (the metrics) shows.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { audioTokens, type MediaLayout } from "../../src/models/media-layout.ts";
import { AV, noiseImage, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyOmniModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;
let media: MediaLayout;
let png: Uint8Array;
let wav: Uint8Array;

beforeAll(async () => {
  server = await startTestServer({}, { modelDir: await tinyOmniModelDir() });
  openai = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: server.key, baseURL: server.url, maxRetries: 0 });
  media = server.deps.registry.get(server.modelId)!.media!;
  png = await noiseImage("png", 80, 60);
  wav = wavBytes(sine(440, 1, 16000), 16000);
});
afterAll(() => server.stop(1000));

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const QUESTION = "What is in this?";

/** Prompt tokens of the chat request with the question alone. */
async function textOnlyChatTokens(): Promise<number> {
  const r = await openai.chat.completions.create({ model: server.modelId, max_tokens: 1, messages: [{ role: "user", content: QUESTION }] });
  return r.usage!.prompt_tokens;
}

describe("the built-in multimodal model", () => {
  test("is listed with vision and audio, its image size, patch size and audio sample rate", async () => {
    const m = (await openai.models.retrieve(server.modelId)) as unknown as Record<string, unknown>;
    expect(m.capabilities).toMatchObject({ vision: true, audio: true });
    expect(m.media).toEqual({
      image: { size: media.image!.size, patch_size: media.image!.patchSize, tokens_per_image: media.image!.tokens },
      audio: { sample_rate: 16000, tokens_per_second: audioTokens(media.audio!, 30 * 16000) / 30 },
    });
  });
});

describe("images", () => {
  test("chat image_url (data URL): 200, its rows counted as prompt tokens, streamed or not", async () => {
    const alone = await textOnlyChatTokens();
    const content: OpenAI.Chat.ChatCompletionContentPart[] = [{ type: "text", text: QUESTION }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } }];
    const r = await openai.chat.completions.create({ model: server.modelId, max_tokens: 8, messages: [{ role: "user", content }] });
    expect(r.choices[0]!.message.role).toBe("assistant");
    // The placeholder token the template writes becomes the image's rows.
    expect(r.usage!.prompt_tokens).toBe(alone + media.image!.tokens);
    // The usage row billed is the same count, priced as input tokens.
    const row = await waitFor(
      () => sqliteOf(server.deps.db).$client.query("SELECT input_tokens AS n, cost_micros AS c FROM usage WHERE model = ? ORDER BY id DESC LIMIT 1").get(server.modelId) as { n: number; c: number } | null,
      { what: "the image request's usage row", until: (v) => v?.n === r.usage!.prompt_tokens },
    );
    expect(row!.c).toBeGreaterThan(0);
    const stream = await openai.chat.completions.create({ model: server.modelId, max_tokens: 8, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content }] });
    let usage: OpenAI.CompletionUsage | undefined;
    let text = "";
    for await (const chunk of stream) {
      usage = chunk.usage ?? usage;
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(usage!.prompt_tokens).toBe(r.usage!.prompt_tokens);
    // Greedy by default at temperature 0: the streamed answer is the same answer.
    const again = await openai.chat.completions.create({ model: server.modelId, max_tokens: 8, temperature: 0, messages: [{ role: "user", content }] });
    const streamedGreedy = await openai.chat.completions.create({ model: server.modelId, max_tokens: 8, temperature: 0, stream: true, messages: [{ role: "user", content }] });
    let greedy = "";
    for await (const chunk of streamedGreedy) greedy += chunk.choices[0]?.delta.content ?? "";
    expect(greedy).toBe(again.choices[0]!.message.content ?? "");
    expect(typeof text).toBe("string");
  });

  test("Responses input_image inline and by file_id: 200, the same count, and input_tokens agrees", async () => {
    const input = (image: OpenAI.Responses.ResponseInputImage): OpenAI.Responses.ResponseInput => [
      { role: "user", content: [{ type: "input_text", text: QUESTION }, image] },
    ];
    const inline = input({ type: "input_image", detail: "auto", image_url: `data:image/png;base64,${b64(png)}` });
    const file = await openai.files.create({ file: await toFile(png, "picture.png"), purpose: "vision" });
    const byId = input({ type: "input_image", detail: "auto", file_id: file.id });
    const textOnly = await openai.responses.create({ model: server.modelId, max_output_tokens: 16, input: [{ role: "user", content: [{ type: "input_text", text: QUESTION }] }] });
    const a = await openai.responses.create({ model: server.modelId, max_output_tokens: 16, input: inline });
    const b = await openai.responses.create({ model: server.modelId, max_output_tokens: 16, input: byId });
    expect(a.status === "completed" || a.status === "incomplete").toBe(true);
    expect(a.usage!.input_tokens).toBe(textOnly.usage!.input_tokens + media.image!.tokens);
    expect(b.usage!.input_tokens).toBe(a.usage!.input_tokens);
    const counted = await openai.responses.inputTokens.count({ model: server.modelId, input: byId });
    expect(counted.input_tokens).toBe(a.usage!.input_tokens);
    expect((await openai.responses.inputTokens.count({ model: server.modelId, input: inline })).input_tokens).toBe(a.usage!.input_tokens);
  });

  test("Messages image (base64): 200, counted, and count_tokens agrees; streamed too", async () => {
    const content: Anthropic.ContentBlockParam[] = [{ type: "text", text: QUESTION }, { type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } }];
    const textOnly = await anthropic.messages.create({ model: server.modelId, max_tokens: 8, messages: [{ role: "user", content: QUESTION }] });
    const m = await anthropic.messages.create({ model: server.modelId, max_tokens: 8, messages: [{ role: "user", content }] });
    expect(m.type).toBe("message");
    // Messages counts cache reads apart from input_tokens (a shared opening may come from the prefix cache): the
    // whole prompt is their sum.
    const prompt = (u: Anthropic.Usage) => u.input_tokens + (u.cache_read_input_tokens ?? 0);
    expect(prompt(m.usage)).toBe(prompt(textOnly.usage) + media.image!.tokens);
    const counted = await anthropic.messages.countTokens({ model: server.modelId, messages: [{ role: "user", content }] });
    expect(counted.input_tokens).toBe(prompt(m.usage));
    const final = await anthropic.messages.stream({ model: server.modelId, max_tokens: 8, messages: [{ role: "user", content }] }).finalMessage();
    expect(prompt(final.usage)).toBe(prompt(m.usage));
    // The repeat's image rows are the same bytes: they come from the cache.
    expect(final.usage.cache_read_input_tokens ?? 0).toBeGreaterThanOrEqual(media.image!.tokens);
  });
});

describe("audio and video", () => {
  test("chat input_audio: 200, the clip's rows counted", async () => {
    const alone = await textOnlyChatTokens();
    const r = await openai.chat.completions.create({
      model: server.modelId,
      max_tokens: 8,
      messages: [{ role: "user", content: [{ type: "text", text: QUESTION }, { type: "input_audio", input_audio: { data: b64(wav), format: "wav" } }] }],
    });
    expect(r.usage!.prompt_tokens).toBe(alone + audioTokens(media.audio!, 16000));
  });

  test("a clip shorter than one Whisper frame, and one whose last 30 s piece is a few samples: 200, counted as padded", async () => {
    const alone = await textOnlyChatTokens();
    const ask = (samples: number) =>
      openai.chat.completions.create({
        model: server.modelId,
        max_tokens: 2,
        messages: [{ role: "user", content: [{ type: "text", text: QUESTION }, { type: "input_audio", input_audio: { data: b64(wavBytes(sine(440, samples / 16000, 16000), 16000)), format: "wav" } }] }],
      });
    expect((await ask(100)).usage!.prompt_tokens).toBe(alone + 2);
    expect((await ask(480_080)).usage!.prompt_tokens).toBe(alone + 189 + 2);
  });

  test("Responses input_audio: 200, counted, and input_tokens agrees", async () => {
    const input = [{ role: "user", content: [{ type: "input_text", text: QUESTION }, { type: "input_audio", input_audio: { data: b64(wav), format: "wav" } }] }] as unknown as OpenAI.Responses.ResponseInput;
    const textOnly = await openai.responses.create({ model: server.modelId, max_output_tokens: 16, input: [{ role: "user", content: [{ type: "input_text", text: QUESTION }] }] });
    const r = await openai.responses.create({ model: server.modelId, max_output_tokens: 16, input });
    expect(r.usage!.input_tokens).toBe(textOnly.usage!.input_tokens + audioTokens(media.audio!, 16000));
    expect((await openai.responses.inputTokens.count({ model: server.modelId, input })).input_tokens).toBe(r.usage!.input_tokens);
  });

  test("a short mp4 with sound: 200, its frames and its sound counted", async () => {
    const mp4 = await AV.mp4();
    const alone = await textOnlyChatTokens();
    const r = await openai.chat.completions.create({
      model: server.modelId,
      max_tokens: 8,
      messages: [{ role: "user", content: [{ type: "text", text: QUESTION }, { type: "file", file: { file_data: `data:video/mp4;base64,${b64(mp4)}`, filename: "clip.mp4" } }] }],
    });
    const added = r.usage!.prompt_tokens - alone;
    // 3 s at one frame a second, each frame an image's rows, then about 3 s of sound (the encoder's padding may add a row).
    const frames = Math.round((added - audioTokens(media.audio!, 3 * 16000)) / media.image!.tokens);
    expect(frames).toBeGreaterThanOrEqual(2);
    expect(frames).toBeLessThanOrEqual(4);
    expect(Math.abs(added - frames * media.image!.tokens - audioTokens(media.audio!, 3 * 16000))).toBeLessThanOrEqual(1);
  });
});

describe("placeholders", () => {
  test("text that holds the image placeholder is a 400, with or without media (nothing would fill its row)", async () => {
    const status = (content: OpenAI.Chat.ChatCompletionUserMessageParam["content"]) =>
      openai.chat.completions.create({ model: server.modelId, max_tokens: 2, messages: [{ role: "user", content }] }).then(
        () => 200,
        (e: { status: number; error?: { message?: string } }) => [e.status, e.error?.message ?? ""],
      );
    expect(await status("look <image> here")).toEqual([400, expect.stringContaining("placeholder '<image>'")]);
    expect(await status([{ type: "text", text: "look <image> here" }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } }])).toEqual([400, expect.stringContaining("do not match its 1 media item")]);
  });
});

describe("batching", () => {
  test("an image request and a text request running at the same time share one decode batch", async () => {
    const mixedSteps = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return sampleValue(parsePrometheusText(text), "kiln_decode_steps_total", { rows: "mixed" });
    };
    const before = await mixedSteps();
    // A long text stream is decoding when the image request arrives, and still decoding when it ends.
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      signal: controller.signal,
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, max_tokens: 3500, ignore_eos: true, stream: true, messages: [{ role: "user", content: "Tell a long story." }] }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const r = await openai.chat.completions.create({
      model: server.modelId,
      max_tokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: QUESTION }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } }] }],
      ...({ ignore_eos: true } as object),
    });
    expect(r.usage!.completion_tokens).toBe(16);
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();
    await reader.cancel().catch(() => {});
    // The image request's 16 decode steps ran beside the text stream's rows: each one a mixed step.
    await waitFor(async () => (await mixedSteps()) - before, { what: "15 mixed decode steps", until: (n) => n >= 15 });
  });
});
