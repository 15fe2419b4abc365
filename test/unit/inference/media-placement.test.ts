import { describe, expect, test } from "bun:test";
import type { MediaPart } from "../../../src/inference/conversation.ts";
import type { DecodedAudio, DecodedImage, DecodedVideo } from "../../../src/inference/media.ts";
import { expandPlaceholders, inertPlaceholders, mediaSlots, slotTokens } from "../../../src/inference/media-placement.ts";
import { Template } from "@huggingface/jinja";
import { templateMessages } from "../../../src/inference/prompt-format.ts";
import type { MediaLayout } from "../../../src/models/media-layout.ts";

const IMG = 900, AUD = 901;
const layout: MediaLayout = {
  layout: "kiln-omni",
  image: { token: "<image>", tokenId: IMG, size: 56, patchSize: 14, tokens: 16 },
  audio: { token: "<|audio|>", tokenId: AUD, sampleRate: 16000, hopLength: 160, nMels: 80, encoderDsFactor: 320, stackFactor: 8, chunkSeconds: 30 },
};
const visionOnly: MediaLayout = { ...layout, layout: "llava", audio: null };

const image: DecodedImage = { medium: "image", format: "png", width: 4, height: 4, bytes: new Uint8Array([1, 2, 3]), sha256: "a" };
const audio = (seconds: number): DecodedAudio => ({ medium: "audio", format: "wav", sampleRate: 16000, samples: new Float32Array(16000 * seconds), durationS: seconds, sha256: "b" });
const frame = { timeS: 0, width: 2, height: 2, rgb: new Uint8Array(12) };
const video = (withSound: boolean): DecodedVideo => ({
  medium: "video", format: "mp4", width: 2, height: 2, durationS: 2, frames: [frame, { ...frame, timeS: 1 }], audio: withSound ? audio(2) : null, sha256: "c",
});
const part = (decoded: MediaPart["decoded"], at = "messages.0.content.1"): MediaPart => ({ type: "media", declared: decoded!.medium, source: { kind: "url", url: "x" }, at, decoded });

describe("media slots", () => {
  test("an image is one placeholder of the layout's rows; audio one, in 30 s encoder pieces", () => {
    expect(mediaSlots(layout, part(image))).toEqual([{ kind: "image", inputs: [{ kind: "image", tokens: 16, image: { bytes: image.bytes } }] }]);
    const [slot] = mediaSlots(layout, part(audio(40)));
    expect(slot!.kind).toBe("audio");
    expect(slot!.inputs.map((i) => i.tokens)).toEqual([189, 1 + Math.ceil(500 / 8)]);
    expect(slot!.inputs.map((i) => (i.kind === "audio" ? i.samples.length : 0))).toEqual([480_000, 160_000]);
    // Each piece owns its buffer: a worker message copies a view's whole buffer.
    expect(slot!.inputs.map((i) => (i.kind === "audio" ? i.samples.buffer.byteLength : 0))).toEqual([480_000 * 4, 160_000 * 4]);
  });

  test("a video is one image placeholder per frame, then its sound when the model hears", () => {
    expect(mediaSlots(layout, part(video(true))).map((s) => s.kind)).toEqual(["image", "image", "audio"]);
    expect(mediaSlots(visionOnly, part(video(true))).map((s) => s.kind)).toEqual(["image", "image"]);
    expect(slotTokens(mediaSlots(layout, part(video(true))))).toBe(16 + 16 + 1 + Math.ceil(100 / 8));
  });

  test("a medium the layout has no encoder for is a 400 naming the item", () => {
    expect(() => mediaSlots(visionOnly, part(audio(1), "input.0.content.2"))).toThrow(/input.0.content.2: this model does not take audio/);
    expect(() => mediaSlots({ ...layout, image: null }, part(video(false)))).toThrow(/does not take video/);
  });
});

describe("placeholder expansion", () => {
  test("each placeholder becomes its rows; inputs get their prompt index", () => {
    const slots = [...mediaSlots(layout, part(image)), ...mediaSlots(layout, part(audio(1)))];
    const { promptIds, media } = expandPlaceholders([5, IMG, 6, AUD, 7], layout, slots);
    // 1 s of audio: 50 encoder frames, 7 stacks of 8, plus the end row.
    expect(promptIds.length).toBe(3 + 16 + 8);
    expect(promptIds.slice(0, 2)).toEqual([5, IMG]);
    expect(promptIds.filter((id) => id === IMG).length).toBe(16);
    expect(media.map((m) => [m.kind, m.at, m.tokens])).toEqual([["image", 1, 16], ["audio", 18, 8]]);
    expect(promptIds.slice(18, 26)).toEqual(Array(8).fill(AUD));
    expect(promptIds.at(-1)).toBe(7);
  });

  test("a long clip's pieces follow one another in one run", () => {
    const { promptIds, media } = expandPlaceholders([AUD], layout, mediaSlots(layout, part(audio(40))));
    expect(media.map((m) => m.at)).toEqual([0, 189]);
    expect(promptIds.length).toBe(189 + 64);
  });

  test("text kiln puts in the prompt itself has its placeholder texts broken, so they stay text", () => {
    expect(inertPlaceholders("a <image>, <image> and <|audio|>", layout)).toBe("a <\u2060image>, <\u2060image> and <\u2060|audio|>");
    expect(inertPlaceholders("a <image>", null)).toBe("a <image>");
    expect(inertPlaceholders("a <|audio|>", visionOnly)).toBe("a <|audio|>");
  });

  test("a placeholder in a request without media is refused too (nothing would fill its row)", () => {
    expect(() => expandPlaceholders([5, IMG, 6], layout, [])).toThrow(/do not match its 0 media items/);
    expect(expandPlaceholders([5, 6], layout, [])).toEqual({ promptIds: [5, 6], media: [] });
  });

  test("a placeholder the client typed, or one the template dropped, is refused", () => {
    const slots = mediaSlots(layout, part(image));
    expect(() => expandPlaceholders([IMG, IMG], layout, slots)).toThrow(/do not match its 1 media item/);
    expect(() => expandPlaceholders([1, 2], layout, slots)).toThrow(/placeholder '<image>' or '<\|audio\|>'/);
    expect(() => expandPlaceholders([AUD], layout, slots)).toThrow(/do not match/);
  });
});

/** llava-1.5's template (Hugging Face hub), which filters content parts and fails on plain strings. */
const LLAVA_TEMPLATE =
  "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}" +
  "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}" +
  "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}" +
  "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}";

describe("template messages with media", () => {
  test("a LLaVA template renders text-only and image turns alike", () => {
    const render = (conv: Parameters<typeof templateMessages>[0]) =>
      new Template(LLAVA_TEMPLATE).render({ messages: templateMessages(conv, { slots: () => [{ kind: "image" }] }) as never, add_generation_prompt: true });
    expect(render([{ role: "user", parts: [{ type: "text", text: "Hi" }] }])).toBe("USER: Hi ASSISTANT:");
    expect(render([{ role: "user", parts: [{ type: "text", text: "What?" }, part(image)] }])).toBe("USER: <image>\nWhat? ASSISTANT:");
  });

  test("for a multimodal model every turn is parts, media in order; for a text model, strings", () => {
    const img = part(image);
    const conv = [
      { role: "system" as const, parts: [{ type: "text" as const, text: "be brief" }] },
      { role: "user" as const, parts: [{ type: "text" as const, text: "what is " }, img, { type: "text" as const, text: "?" }] },
    ];
    const slots = () => [{ kind: "image" as const }, { kind: "audio" as const }];
    const msgs = templateMessages(conv, { slots });
    expect(msgs[0]!.content).toEqual([{ type: "text", text: "be brief" }]);
    expect(msgs[1]!.content).toEqual([{ type: "text", text: "what is " }, { type: "image" }, { type: "audio" }, { type: "text", text: "?" }]);
    // Without placeholders (a text model), media are left out as before.
    expect(templateMessages(conv)[1]!.content).toBe("what is ?");
    // A template that takes only strings gets each placeholder's token text where the medium sits.
    const inline = templateMessages(conv, { slots, inline: { image: "<image>", audio: "<|audio|>" } });
    expect(inline.map((m) => m.content)).toEqual(["be brief", "what is <image><|audio|>?"]);
  });
});
