// A decode that wedges, throws or kills its worker fails alone as "corrupt": the worker is replaced, the next decode
// works, and aborting or closing ends decodes at once.
import { afterAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { ApiError } from "../../src/errors/api-error.ts";
import { createMediaDecoder, type MediaDecoder } from "../../src/media/decode/decoder.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { MediaDecodeError } from "../../src/media/types.ts";
import type { DecodedAudio } from "../../src/inference/media.ts";
import { sine, wavBytes } from "../helpers/media-fixtures.ts";
import { waitFor } from "../helpers/wait-for.ts";

const FAULTY = new URL("./fixtures/faulty-media-worker.ts", import.meta.url);
const logger = memoryLogger();
const decoders: MediaDecoder[] = [];
/** The time limit is short for the wedge, but long enough that a fresh worker compiling ffmpeg on a busy box is not cut off. */
function decoder(env: Record<string, string> = {}): MediaDecoder {
  const d = createMediaDecoder(loadConfig({ KILN_MEDIA_DECODE_TIMEOUT_MS: "6000", ...env }, []), { logger, workerUrl: FAULTY });
  decoders.push(d);
  return d;
}
afterAll(() => Promise.all(decoders.map((d) => d.close())));

/** A valid WAV carrying `mark` in a chunk of its own, which the faulty worker acts on. */
const marked = (mark: string) => wavBytes(sine(440, 0.1, 16000), 16000, 1, { id: "kiln", body: new TextEncoder().encode(mark) });
const good = () => wavBytes(sine(440, 0.25, 16000), 16000);

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => new Error("it decoded"),
    (e: unknown) => e,
  );
}

describe("a decode that never ends, throws or kills its worker", () => {
  test.each([
    ["wedges (runs past the time limit)", "kiln-wedge"],
    ["throws out of the worker", "kiln-throw"],
    ["exits the worker thread", "kiln-exit"],
  ])("%s: that decode is corrupt, the worker is replaced, the next decode works", async (_name, mark) => {
    const d = decoder();
    const e = await failure(d.decode(marked(mark), "audio"));
    expect(e).toBeInstanceOf(MediaDecodeError);
    expect([(e as MediaDecodeError).reason, (e as MediaDecodeError).message]).toEqual(["corrupt", "corrupt wav audio: decoding it failed"]);
    expect(d.stats().replaced).toBe(1);
    const audio = (await d.decode(good(), "audio")) as DecodedAudio;
    expect(audio.samples.length).toBe(4000);
    expect(d.stats()).toEqual({ workers: 1, busy: 0, queued: 0, replaced: 1 });
  }, 30_000);

  test("the worker's own error text reaches the log only", async () => {
    const d = decoder();
    const e = await failure(d.decode(marked("kiln-throw"), "audio"));
    expect(String((e as Error).message)).not.toContain("/opt/secret");
    expect(JSON.stringify(logger.lines)).toContain("/opt/secret/path.c:42");
  });

  test("with two workers, a wedged decode holds one while the other keeps decoding", async () => {
    const d = decoder({ KILN_MEDIA_WORKERS: "2", KILN_MEDIA_DECODE_TIMEOUT_MS: "20000" });
    const stuck = failure(d.decode(marked("kiln-wedge"), "audio"));
    for (let i = 0; i < 3; i++) expect(((await d.decode(good(), "audio")) as DecodedAudio).samples.length).toBe(4000);
    expect(d.stats().busy).toBe(1);
    await d.close();
    expect(((await stuck) as Error).message).toBe("the media decoder is closed");
  }, 30_000);
});

describe("aborting", () => {
  test("a running decode: rejected with the signal's reason at once, its worker replaced, the next one works", async () => {
    const d = decoder({ KILN_MEDIA_DECODE_TIMEOUT_MS: "60000" });
    const ac = new AbortController();
    const running = failure(d.decode(marked("kiln-wedge"), "audio", ac.signal));
    await waitFor(() => d.stats().busy, { what: "the wedged decode to start" });
    const started = performance.now();
    ac.abort(new Error("client went away"));
    expect(((await running) as Error).message).toBe("client went away");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(((await d.decode(good(), "audio")) as DecodedAudio).samples.length).toBe(4000);
    expect(d.stats().replaced).toBe(1);
  });

  test("a queued decode leaves the queue without running; an already aborted signal never queues", async () => {
    const d = decoder({ KILN_MEDIA_DECODE_TIMEOUT_MS: "2000" });
    const stuck = failure(d.decode(marked("kiln-wedge"), "audio"));
    const ac = new AbortController();
    const queued = failure(d.decode(good(), "audio", ac.signal));
    expect(d.stats().queued).toBe(1);
    ac.abort(new Error("gave up waiting"));
    expect(((await queued) as Error).message).toBe("gave up waiting");
    expect(d.stats().queued).toBe(0);
    expect(((await failure(d.decode(good(), "audio", AbortSignal.abort(new Error("too late"))))) as Error).message).toBe("too late");
    expect((await stuck) as MediaDecodeError).toMatchObject({ reason: "corrupt" });
  });
});

describe("the queue is bounded", () => {
  test("every worker busy and KILN_MEDIA_MAX_QUEUE decodes waiting: one more is refused at once with 503 service_overloaded, the waiting ones still run", async () => {
    const d = decoder({ KILN_MEDIA_MAX_QUEUE: "2", KILN_MEDIA_DECODE_TIMEOUT_MS: "60000" });
    const ac = new AbortController();
    const stuck = failure(d.decode(marked("kiln-wedge"), "audio", ac.signal));
    const waiting = [d.decode(good(), "audio"), d.decode(good(), "audio")];
    expect(d.stats()).toMatchObject({ busy: 1, queued: 2 });
    const e = await failure(d.decode(good(), "audio"));
    expect(e).toBeInstanceOf(ApiError);
    const refused = e as ApiError;
    expect([refused.status, refused.type, refused.code, refused.headers["retry-after"]]).toEqual([503, "server_error", "service_overloaded", "60"]);
    expect(d.stats()).toMatchObject({ busy: 1, queued: 2 });
    ac.abort(new Error("client went away"));
    expect(((await stuck) as Error).message).toBe("client went away");
    for (const audio of (await Promise.all(waiting)) as DecodedAudio[]) expect(audio.samples.length).toBe(4000);
    expect(((await d.decode(good(), "audio")) as DecodedAudio).samples.length).toBe(4000);
  }, 30_000);

  test("a queue of 0 still lets a free worker take a decode; only waiting is refused", async () => {
    const d = decoder({ KILN_MEDIA_MAX_QUEUE: "0" });
    const running = d.decode(good(), "audio");
    expect(((await failure(d.decode(good(), "audio"))) as ApiError).code).toBe("service_overloaded");
    expect(((await running) as DecodedAudio).samples.length).toBe(4000);
  });
});

test("after close, decodes are refused", async () => {
  const d = decoder();
  await d.decode(good(), "audio");
  await d.close();
  expect(((await failure(d.decode(good(), "audio"))) as Error).message).toBe("the media decoder is closed");
  expect(d.stats()).toEqual({ workers: 0, busy: 0, queued: 0, replaced: 0 });
});
