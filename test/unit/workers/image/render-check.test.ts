// Render requests checked against the loaded model before they are held: every refusal names what is wrong.
import { describe, expect, test } from "bun:test";
import type { RenderRequest } from "../../../../src/protocol/image.ts";
import { latentShapeOf, renderProblem } from "../../../../workers/image/render-check.ts";
import { TextEncoder } from "../../../../workers/image/text-encoder.ts";
import { fakeModel } from "./fake-diffusion.ts";

const req = (over: Partial<RenderRequest> = {}): RenderRequest => ({ promptIds: [1, 2, 3, 4], guidance: 1, width: 64, height: 32, steps: 2, seed: 1, ...over });
const init = (over = {}) => ({ rgb: new Uint8Array(64 * 32 * 3), strength: 0.5, ...over });

describe("renderProblem", () => {
  const { model } = fakeModel();

  test("a plain request and a full edit pass", () => {
    expect(renderProblem(req(), model)).toBeNull();
    expect(renderProblem(req({ init: init({ mask: new Float32Array(32).fill(1) }) }), model)).toBeNull();
    expect(latentShapeOf(req(), model)).toEqual({ channels: 4, height: 4, width: 8 });
  });

  const cases: [string, Partial<RenderRequest>, string][] = [
    ["a size off the VAE grid", { width: 60 }, "positive multiples of 8"],
    ["a zero size", { height: 0 }, "positive multiples of 8"],
    ["fractional steps", { steps: 1.5 }, "steps must be an integer from 1 to 1000"],
    ["too many steps", { steps: 1001 }, "steps must be an integer from 1 to 1000"],
    ["a NaN seed", { seed: NaN }, "seed must be a finite number"],
    ["a NaN guidance", { guidance: NaN }, "guidance must be a finite number"],
    ["ids of the wrong length", { promptIds: [1, 2] }, "exactly 4 ids"],
    ["negative ids", { promptIds: [1, -2, 3, 4] }, "non-negative integers"],
    ["guidance without uncondIds", { guidance: 2 }, "unconditional prompt's ids"],
    ["uncondIds of the wrong length", { guidance: 2, uncondIds: [0, 0] }, "unconditional ids: the text encoder takes exactly 4 ids"],
    ["init bytes of the wrong size", { init: init({ rgb: new Uint8Array(10) }) }, "64×32 packed RGB"],
    ["a zero strength", { init: init({ strength: 0 }) }, "strength must be in (0, 1]"],
    ["a mask of the wrong size", { init: init({ mask: new Float32Array(5) }) }, "the mask must hold 32 latent cells"],
    ["a mask out of range", { init: init({ mask: new Float32Array(32).fill(2) }) }, "mask values must be in [0, 1]"],
  ];
  for (const [what, over, message] of cases) {
    test(`refuses ${what}`, () => {
      expect(renderProblem(req(over), model)).toContain(message);
    });
  }

  test("refuses ids beyond the text encoder's vocabulary", () => {
    const text = new TextEncoder(model.text.session, model.text.io, 4);
    expect(renderProblem(req(), { ...model, text })).toContain("below the vocabulary size 4");
    expect(renderProblem(req({ promptIds: [0, 1, 2, 3] }), { ...model, text })).toBeNull();
  });

  test("refuses an edit without a VAE encoder, and sizes a fixed graph cannot run", () => {
    expect(renderProblem(req({ init: init() }), { ...model, encoder: null })).toContain("no VAE encoder");
    const fixed = fakeModel({ height: 8, width: 8 }).model;
    expect(renderProblem(req(), fixed)).toContain("only runs 8×8 latents (asked for 8×4)");
  });
});
