// The diffusion engine's pass loop over fake sessions: what each pass holds, fairness between sizes, caches, cancel
// and failures, seen through the sessions' calls and the emitted messages.
import { describe, expect, test } from "bun:test";
import type { ImageFromWorker, RenderRequest } from "../../../../src/protocol/image.ts";
import { DiffusionEngine } from "../../../../workers/image/engine.ts";
import { fakeModel } from "./fake-diffusion.ts";

const req = (over: Partial<RenderRequest> = {}): RenderRequest => ({ promptIds: [1, 2, 3, 4], guidance: 1, width: 64, height: 64, steps: 2, seed: 1, ...over });

function setup(maxBatch = 4, unetIo = {}) {
  const { model, controls } = fakeModel(unetIo);
  const out: ImageFromWorker[] = [];
  const engine = new DiffusionEngine(model, { maxBatch, emit: (m) => out.push(m) });
  const drain = async () => {
    while (engine.hasWork()) await engine.step();
  };
  const graphs = () => controls.calls.map((c) => `${c.graph}:${c.rows}`);
  const ends = () => Object.fromEntries(out.map((m) => [m.jobId, m.type === "render_failed" ? `failed${m.retryable ? " (retryable)" : ""}` : m.type]));
  return { engine, controls, out, drain, graphs, ends };
}

describe("DiffusionEngine passes", () => {
  test("text first (shared prompts encoded once), then UNet passes of up to maxBatch rows, then one decode", async () => {
    const s = setup(4);
    s.engine.add("a", req({ seed: 1 }));
    s.engine.add("b", req({ seed: 2 }));
    s.engine.add("c", req({ seed: 3, guidance: 2, uncondIds: [0, 0, 0, 0] }));
    await s.drain();
    // text: the prompt and the empty prompt; UNet: a, b, c.uncond, c.cond then the second step the same.
    expect(s.graphs()).toEqual(["text:2", "unet:4", "unet:4", "decoder:3"]);
    expect(s.ends()).toEqual({ a: "rendered", b: "rendered", c: "rendered" });
  });

  test("cached prompts skip the text pass; the decode pass keeps to the VAE pixel budget", async () => {
    const s = setup(8);
    s.engine.add("warm", req());
    await s.drain();
    s.controls.calls.length = 0;
    for (const id of ["x", "y", "z"]) s.engine.add(id, req({ width: 512, height: 512 }));
    await s.drain();
    expect(s.graphs()).toEqual(["unet:3", "unet:3", "decoder:2", "decoder:1"]);
  });

  test("rows of different sizes never share a pass, and sizes take turns", async () => {
    const s = setup(4);
    s.engine.add("small", req({ steps: 3 }));
    s.engine.add("wide", req({ width: 128, steps: 3 }));
    await s.drain();
    const unet = s.controls.calls.filter((c) => c.graph === "unet").map((c) => `${c.dims[3]}`);
    expect(unet).toEqual(["8", "16", "8", "16", "8", "16"]);
  });

  test("each row carries its own timestep; a shared-timestep graph groups rows by timestep", async () => {
    const perRow = setup(4);
    perRow.engine.add("two", req({ steps: 2 }));
    await perRow.engine.step(); // text
    await perRow.engine.step(); // two's first step
    perRow.engine.add("four", req({ steps: 4, seed: 9 }));
    await perRow.drain();
    expect(perRow.controls.calls.filter((c) => c.graph === "unet").map((c) => c.timesteps)).toEqual([[999], [499, 999], [749], [499], [249]]);
    const shared = setup(4, { timestep: "shared" });
    shared.engine.add("two", req({ steps: 2 }));
    shared.engine.add("four", req({ steps: 4, seed: 9 }));
    await shared.drain();
    // Both start at 999 and share that pass; then 499 (two) and 749 (four) differ and run apart.
    expect(shared.controls.calls.filter((c) => c.graph === "unet").map((c) => [c.rows, c.timesteps])).toEqual([
      [2, [999]],
      [1, [499]],
      [1, [749]],
      [1, [499]],
      [1, [249]],
    ]);
  });

  test("a fixed UNet batch of 1 runs guidance rows in separate passes", async () => {
    const s = setup(4, { batch: 1 });
    s.engine.add("g", req({ guidance: 3, uncondIds: [0, 0, 0, 0], steps: 1 }));
    await s.drain();
    expect(s.graphs()).toEqual(["text:2", "unet:1", "unet:1", "decoder:1"]);
    expect(s.ends()).toEqual({ g: "rendered" });
  });

  test("a newcomer joins at the next pass", async () => {
    const s = setup(4);
    s.engine.add("first", req({ steps: 4 }));
    await s.engine.step();
    await s.engine.step();
    s.engine.add("second", req({ steps: 4, seed: 2 }));
    await s.drain();
    expect(s.graphs().slice(0, 3)).toEqual(["text:1", "unet:1", "unet:2"]);
  });

  test("n renders of one edit share one VAE encoding; a later one takes it from the cache", async () => {
    const s = setup(4);
    const init = { rgb: new Uint8Array(64 * 64 * 3).fill(9), strength: 0.5 };
    s.engine.add("e1", req({ init, seed: 1 }));
    s.engine.add("e2", req({ init, seed: 2 }));
    await s.drain();
    s.engine.add("e3", req({ init, seed: 3 }));
    await s.drain();
    expect(s.graphs().filter((g) => g.startsWith("encoder"))).toEqual(["encoder:1"]);
    const rendered = s.out.filter((m) => m.type === "rendered");
    expect(rendered.map((m) => m.timings.encodeMs > 0)).toEqual([true, true, false]);
  });
});

describe("DiffusionEngine endings", () => {
  test("a cancel drops the render at the next pass boundary; unknown ids are ignored", async () => {
    const s = setup(4);
    s.engine.add("keep", req({ steps: 3 }));
    s.engine.add("drop", req({ steps: 3, seed: 2 }));
    await s.engine.step();
    await s.engine.step();
    s.engine.cancel("drop");
    s.engine.cancel("unknown");
    expect(s.engine.counts()).toEqual({ active: 2, queued: 0 });
    await s.drain();
    expect(s.ends()).toEqual({ drop: "render_cancelled", keep: "rendered" });
    expect(s.controls.calls.filter((c) => c.graph === "unet").map((c) => c.rows)).toEqual([2, 1, 1]);
  });

  test("a pass that throws fails its renders, not retryably; others go on", async () => {
    const s = setup(2);
    s.engine.add("a", req());
    s.engine.add("b", req({ seed: 2 }));
    s.engine.add("c", req({ width: 128 }));
    s.controls.failNext.unet = "boom";
    await s.drain();
    expect(s.ends()).toEqual({ a: "failed", b: "failed", c: "rendered" });
    expect(s.out.find((m) => m.jobId === "a")).toMatchObject({ message: "UNet failed: boom" });
  });

  test("text encoder and decoder failures fail the renders that needed them", async () => {
    const s = setup(4);
    s.controls.failNext.text = "no text";
    s.engine.add("t", req());
    await s.drain();
    s.controls.failNext.decoder = "no pixels";
    s.engine.add("d", req());
    await s.drain();
    expect(s.ends()).toEqual({ t: "failed", d: "failed" });
  });

  test("a VAE encoder that makes latents of the wrong size fails the edit, not the worker", async () => {
    const s = setup(4);
    s.controls.encoderScale = 4;
    s.engine.add("edit", req({ init: { rgb: new Uint8Array(64 * 64 * 3), strength: 1 } }));
    s.engine.add("t2i", req());
    await s.drain();
    expect(s.ends()).toEqual({ edit: "failed", t2i: "rendered" });
    expect(s.out.find((m) => m.jobId === "edit")).toMatchObject({ message: "the VAE encoder made 1024 latent values, not 256" });
  });

  test("NaN in a row's output fails that render retryably", async () => {
    const s = setup(4);
    // Only the render whose noise starts above 0 at its first value gets NaN.
    s.controls.nanAbove = 0;
    for (let seed = 1; seed <= 6; seed++) s.engine.add(`s${seed}`, req({ seed, steps: 1 }));
    await s.drain();
    const kinds = new Set(Object.values(s.ends()));
    expect(kinds).toEqual(new Set(["rendered", "failed (retryable)"]));
  });

  test("a request the model cannot run fails at once; a duplicate id is refused", () => {
    const s = setup(4);
    s.engine.add("bad", req({ steps: 0 }));
    s.engine.add("dup", req());
    s.engine.add("dup", req());
    expect(s.out).toEqual([
      { type: "render_failed", jobId: "bad", retryable: false, message: "steps must be an integer from 1 to 1000 (got 0)" },
      { type: "render_failed", jobId: "dup", retryable: false, message: "a render with this job id is already held" },
    ]);
    expect(s.engine.counts()).toEqual({ active: 0, queued: 1 });
  });
});
