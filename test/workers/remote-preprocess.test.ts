// The media preprocessing thread: its inputs come out exactly as preprocessing in process gives them, the caller's
// input left intact; a thread that dies fails only what it held, and the next input starts a new one.
import { describe, expect, test } from "bun:test";
import type { FromPrep, ToPrep } from "../../src/protocol/media-prep.ts";
import type { MediaInput } from "../../src/protocol/text.ts";
import { WORKER_ENTRIES, workerEntryUrl } from "../../src/native/worker-url.ts";
import { MediaPreprocessor } from "../../workers/text/media-preprocess.ts";
import { MediaInputError } from "../../workers/text/model-runner.ts";
import { type PrepThread, RemotePreprocessor } from "../../workers/text/remote-preprocess.ts";
import { noiseImage } from "../helpers/media-fixtures.ts";
import { mediaModelDir, testClip } from "./media-models.ts";

const kinds = { image: true, audio: true };
const realThread = () => new Worker(workerEntryUrl(WORKER_ENTRIES.mediaPrep)) as unknown as PrepThread;

describe("the preprocessing thread", () => {
  test("gives what preprocessing in process gives, for an image and a clip, leaving the inputs intact", async () => {
    const dir = await mediaModelDir("tiny-omni");
    const local = await MediaPreprocessor.load(dir, kinds);
    const remote = await RemotePreprocessor.start(realThread, dir, kinds);
    try {
      const png = await noiseImage("png", 90, 70);
      const image: MediaInput = { kind: "image", at: 0, tokens: 16, image: { bytes: png.slice() } };
      expect(await remote.prepare(image)).toEqual(await local.prepare({ ...image, image: { bytes: png.slice() } }));
      const samples = testClip(16000 * 3, 1);
      const expected = await local.prepare({ kind: "audio", at: 0, tokens: 20, samples: samples.slice(), sampleRate: 16000 });
      expect(await remote.prepare({ kind: "audio", at: 0, tokens: 20, samples, sampleRate: 16000 })).toEqual(expected);
      expect(samples.byteLength).toBe(16000 * 3 * 4);
      // Our own checks' messages come through as such.
      const refused = await remote.prepare({ kind: "audio", at: 0, tokens: 2, samples: new Float32Array(800), sampleRate: 8000 }).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(MediaInputError);
      expect((refused as Error).message).toBe("audio is sampled at 8000 Hz, the model takes 16000 Hz");
    } finally {
      remote.dispose();
    }
  });

  test("a folder it cannot load fails the start with the reason", async () => {
    await expect(RemotePreprocessor.start(realThread, "/nonexistent/kiln-model", kinds)).rejects.toThrow();
  });

  test("a thread that dies, ends or wedges fails the inputs it held; the next input starts a new thread", async () => {
    const threads: FakeThread[] = [];
    class FakeThread implements PrepThread {
      onmessage: ((ev: MessageEvent<FromPrep>) => void) | null = null;
      onerror: ((ev: ErrorEvent) => void) | null = null;
      terminated = false;
      held: number[] = [];
      closeListener: (() => void) | null = null;
      addEventListener(_type: "close", listener: () => void): void {
        this.closeListener = listener;
      }
      postMessage(msg: ToPrep): void {
        queueMicrotask(() => {
          if (msg.type === "load") this.onmessage?.({ data: { type: "loaded" } } as MessageEvent<FromPrep>);
          else this.held.push(msg.id);
        });
      }
      terminate(): void {
        this.terminated = true;
      }
      reply(id: number): void {
        this.onmessage?.({ data: { type: "prepared", id, data: new Float32Array([id]), dims: [1] } } as MessageEvent<FromPrep>);
      }
    }
    const p = await RemotePreprocessor.start(
      () => {
        const t = new FakeThread();
        threads.push(t);
        return t;
      },
      "/x",
      kinds,
      200,
    );
    const clip = (): MediaInput => ({ kind: "audio", at: 0, tokens: 2, samples: new Float32Array(400), sampleRate: 16000 });
    const first = p.prepare(clip());
    const second = p.prepare(clip());
    await Promise.resolve();
    await Promise.resolve();
    threads[0]!.reply(threads[0]!.held[0]!);
    expect((await first).data).toEqual(new Float32Array([1]));
    threads[0]!.onerror?.({ message: "boom" } as ErrorEvent);
    await expect(second).rejects.toThrow("the preprocessing thread failed: boom");
    expect(threads[0]!.terminated).toBe(true);
    const third = p.prepare(clip());
    await Promise.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(threads.length).toBe(2);
    threads[1]!.reply(threads[1]!.held[0]!);
    expect((await third).data).toEqual(new Float32Array([3]));
    // A thread that ends without an error event (process.exit, a native abort) fails what it held too.
    const fourth = p.prepare(clip());
    await Promise.resolve();
    threads[1]!.closeListener!();
    await expect(fourth).rejects.toThrow("the preprocessing thread ended");
    // A wedged thread: past the time limit its input fails and the thread is replaced.
    const fifth = p.prepare(clip());
    await expect(fifth).rejects.toThrow("preprocessing took over 200 ms");
    expect(threads[2]!.terminated).toBe(true);
    const sixth = p.prepare(clip());
    await Promise.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(threads.length).toBe(4);
    threads[3]!.reply(threads[3]!.held[0]!);
    expect((await sixth).data).toEqual(new Float32Array([6]));
    p.dispose();
    expect(threads[3]!.terminated).toBe(true);
  });
});
