// The real inference worker on the tiny omni folder over the scheduler protocol: media adds sent to an idle worker are
// preprocessed, admitted and finished; step messages record media and text rows sharing a decode pass;
// bad media ends only its own sequence and the worker keeps serving.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MediaInput } from "../../src/protocol/text.ts";
import { params, WorkerClient } from "./worker-client.ts";
import { audioTokens, mediaConfig, mediaModelDir, testClip, testRgb } from "./media-models.ts";

let w: WorkerClient;
let cfg: ReturnType<typeof mediaConfig>;

beforeAll(async () => {
  const dir = await mediaModelDir("tiny-omni");
  cfg = mediaConfig(dir);
  w = new WorkerClient();
  expect((await w.load(dir, 8)).type).toBe("loaded");
});

afterAll(async () => {
  await w.shutdown();
});

const imageSeq = (seed: number, tokens = 16): [number[], MediaInput[]] => [
  [5, 6, ...Array(tokens).fill(cfg.imageToken), 7],
  [{ kind: "image", at: 2, tokens, image: { rgb: testRgb(cfg.size, seed), width: cfg.size, height: cfg.size } }],
];
const clipSeq = (seed: number): [number[], MediaInput[]] => {
  const n = audioTokens(16000, cfg.stack);
  return [[9, ...Array(n).fill(cfg.audioToken), 10, 11], [{ kind: "audio", at: 1, tokens: n, samples: testClip(16000, seed), sampleRate: 16000 }]];
};

describe("inference worker with media", () => {
  test("an image, a clip and a text prompt sent together finish, sharing decode passes the step messages record", async () => {
    const first = w.steps.length;
    const [img, aud, txt] = await Promise.all([
      w.add("img", ...withParams(imageSeq(1), 12)),
      w.add("aud", ...withParams(clipSeq(1), 12)),
      // Long enough to be decoding still when the media rows join (their preprocessing runs on another thread).
      w.add("txt", [300, 301, 302], { ...params(1500), stopTokenIds: [] }),
    ]);
    for (const r of [img, aud]) expect(r.finish).toMatchObject({ reason: "length", outputTokens: 12 });
    expect(txt.finish).toMatchObject({ reason: "length", outputTokens: 1500 });
    expect(img.finish.promptTokens).toBe(19);
    const batches = w.steps.slice(first).map((s) => s.batch);
    // Media rows decoded beside the text row (whether the image and the clip also met depends on when each was ready).
    expect(batches.some((b) => b !== undefined && b.media >= 1 && b.text === 1)).toBe(true);
    // Alone, the image prompt says the same: batching with audio and text rows changed nothing.
    const alone = await w.add("img-alone", ...withParams(imageSeq(1), 12));
    expect(alone.text).toBe(img.text);
    expect(alone.text).not.toBe((await w.add("img-other", ...withParams(imageSeq(2), 12))).text);
  });

  test("an image and a clip in one prompt run both encoders", async () => {
    const [ids, media] = imageSeq(3);
    const [clipIds, clipMedia] = clipSeq(3);
    const both = await w.add("both", [...ids, ...clipIds], params(6), [...media, { ...clipMedia[0]!, at: ids.length + 1 }]);
    expect(both.finish).toMatchObject({ reason: "length", outputTokens: 6 });
    expect(both.text).not.toBe((await w.add("image-only", [...ids, ...clipIds.map(() => 300)], params(6), media)).text);
  });

  test("bad media ends only its own sequence; the worker keeps serving", async () => {
    const [ids, media] = imageSeq(1, 15);
    const [bad, unreadable, good] = await Promise.all([
      w.add("mismatch", ids, params(4), media),
      w.add("unreadable", imageSeq(1)[0], params(4), [{ kind: "image", at: 2, tokens: 16, image: { bytes: Uint8Array.of(9, 9, 9) } }]),
      w.add("fine", [300, 301], params(4)),
    ]);
    expect(bad.finish).toMatchObject({ reason: "error", outputTokens: 0, message: "media 0 (image): 16 feature rows for 15 placeholder tokens" });
    expect(unreadable.finish).toMatchObject({ reason: "error", message: "media 0 (image): could not be preprocessed" });
    expect(good.finish).toMatchObject({ reason: "length", outputTokens: 4 });
    const pong = await w.ping();
    expect([pong.active, pong.queued]).toEqual([0, 0]);
    expect((await w.add("after", ...withParams(imageSeq(1), 3))).finish.reason).toBe("length");
  });
});

function withParams([ids, media]: [number[], MediaInput[]], tokens: number): [number[], ReturnType<typeof params>, MediaInput[]] {
  return [ids, params(tokens), media];
}
