// kiln's own combined layout (kiln-omni: both encoders) checked against its vision and audio paths run separately:
// the same spec without its audio encoder is a LLaVA folder, without its vision encoder an Ultravox folder, with the
// same weights (seeded per tensor name). One real kiln serves all three; the same image (or clip) gives the same
// prompt size and the same greedy tokens on the combined model as on the single-encoder one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildModel, PRESETS, withoutAudio, withoutVision } from "../../src/modelgen/index.ts";
import { tempDir } from "../helpers/kiln.ts";
import { noiseImage, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const omni = PRESETS["tiny-omni"]!;
const visionOnly = withoutAudio(omni);
const audioOnly = withoutVision(omni);
let server: TestServer;

beforeAll(async () => {
  const dir = tempDir("kiln-layouts-");
  for (const spec of [omni, visionOnly, audioOnly]) await buildModel({ spec, dtypes: ["fp32"], outDir: join(dir, spec.id) });
  server = await startTestServer({}, { modelDir: join(dir, omni.id) });
}, 120_000);
afterAll(() => server?.stop(1000));

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

/** A greedy, fixed-length answer: its token ids are what the text and the count show. */
async function greedy(model: string, part: unknown): Promise<{ text: string; promptTokens: number }> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, temperature: 0, max_tokens: 12, ignore_eos: true, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, part] }] }),
  });
  const body = (await res.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
  expect(res.status).toBe(200);
  expect(body.usage.completion_tokens).toBe(12);
  return { text: body.choices[0]!.message.content, promptTokens: body.usage.prompt_tokens };
}

describe("the combined layout against its single-encoder paths", () => {
  test("the three folders are LLaVA, Ultravox and kiln-omni layouts served side by side", () => {
    const type = (id: string) => JSON.parse(readFileSync(join(server.deps.registry.get(id)!.dir, "config.json"), "utf8")).model_type;
    expect([type(omni.id), type(visionOnly.id), type(audioOnly.id)]).toEqual(["kiln_omni", "llava", "ultravox"]);
    expect(server.deps.registry.get(visionOnly.id)!.capabilities).toMatchObject({ vision: true, audio: false });
    expect(server.deps.registry.get(audioOnly.id)!.capabilities).toMatchObject({ vision: false, audio: true });
  });

  test("an image: the same prompt size and greedy tokens as the vision-only (LLaVA) model", async () => {
    const image = { type: "image_url", image_url: { url: `data:image/png;base64,${b64(await noiseImage("png", 70, 50))}` } };
    const [a, b] = [await greedy(omni.id, image), await greedy(visionOnly.id, image)];
    expect(a).toEqual(b);
    // The image changes the answer: the features reach the decoder.
    const other = { type: "image_url", image_url: { url: `data:image/png;base64,${b64(await noiseImage("jpeg", 70, 50))}` } };
    expect((await greedy(omni.id, other)).text).not.toBe(a.text);
  });

  test("a clip: the same prompt size and greedy tokens as the audio-only (Ultravox) model", async () => {
    const clip = (hz: number) => ({ type: "input_audio", input_audio: { data: b64(wavBytes(sine(hz, 2, 16000), 16000)), format: "wav" } });
    const [a, b] = [await greedy(omni.id, clip(440)), await greedy(audioOnly.id, clip(440))];
    expect(a).toEqual(b);
    expect((await greedy(omni.id, clip(1800))).text).not.toBe(a.text);
  });
});
