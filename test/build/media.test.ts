// The media decoder compiled into a single executable, run alone in an empty folder: it decodes a WAV, an MP4 (with
// sound) and a PNG to exactly what the decoder gives from source, so ffmpeg.wasm and the worker are really embedded.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../../build/compile.ts";
import { loadConfig } from "../../src/config.ts";
import { createMediaDecoder } from "../../src/media/decode/decoder.ts";
import { WORKER_ENTRIES } from "../../src/native/worker-url.ts";
import { AV, noiseImage, sine, wavBytes } from "../helpers/media-fixtures.ts";
import { runOnce } from "./binary-process.ts";
import { summarize } from "./fixtures/media-summary.ts";

const work = mkdtempSync(join(tmpdir(), "kiln-media-bin-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("compiled alone in an empty folder, it decodes a WAV, an MP4 and a PNG exactly as from source", async () => {
  await buildExecutable({ entrypoints: ["test/build/fixtures/media-entry.ts", WORKER_ENTRIES.media], outfile: join(work, "out", "kiln") });
  const dir = join(work, "run");
  mkdirSync(dir);
  copyFileSync(join(work, "out", "kiln"), join(dir, "kiln"));
  const files: Record<string, Uint8Array> = {
    "tone.wav": wavBytes(sine(440, 1, 44100), 44100),
    "clip.mp4": await AV.mp4(),
    "picture.png": await noiseImage("png"),
  };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);

  const { code, out } = await runOnce(dir, ["--data-dir", join(dir, "data"), ...Object.keys(files)], dir, 120_000);
  expect(code).toBe(0);
  const report = JSON.parse(out.trim().split("\n").at(-1)!) as { compiled: boolean; results: Record<string, unknown>[] };
  expect(report.compiled).toBe(true);

  const fromSource = createMediaDecoder(loadConfig({}, []));
  const expected = [];
  for (const bytes of Object.values(files)) expected.push(summarize(await fromSource.decode(bytes.slice(), "any")));
  await fromSource.close();
  expect(report.results).toEqual(expected);
  expect(report.results.map((r) => [r.medium, r.format])).toEqual([["audio", "wav"], ["video", "mp4"], ["image", "png"]]);
  expect(report.results[0]!.samples).toBe(16000);
  expect((report.results[1]!.frames as unknown[]).length).toBe(3);
  expect(report.results[1]!.audio).not.toBeNull();
}, 300_000);
