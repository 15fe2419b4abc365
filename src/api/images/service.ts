// The Images API's logic: generations and edits map onto renders of the image core (one per image), run through the
// shared admission, queue and settlement (src/images/run.ts), and answer {created, data: [{b64_json}], usage}.
import type { AppDeps } from "../../app-deps.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { ApiError } from "../../errors/api-error.ts";
import { type Canvas, type CanvasImage, composeCanvas, uprightSize } from "../../images/compose.ts";
import { encodeImage } from "../../images/encode.ts";
import { naturalAspect, overlay } from "../../images/layout.ts";
import { type Rendered, runRenders } from "../../images/run.ts";
import { RunStop } from "../../inference/admitted-run.ts";
import type { MediaPart } from "../../inference/conversation.ts";
import type { ModelEntry } from "../../models/registry.ts";
import type { RenderInit, RenderRequest } from "../../protocol/image.ts";
import { type CommonFields, type ImageOptions, imageModel, imageOptions, seedOf, sizeFor } from "./options.ts";
import type { GenerationBody, ImagesResponseBody } from "./schema.ts";

/** An edit, from its JSON or its multipart form: the fields, the images in order and the mask. */
export interface EditInput {
  fields: CommonFields & { model: string; prompt: string; input_fidelity?: "high" | "low" | null };
  images: MediaPart[];
  mask: MediaPart | null;
}

export async function generateImages(deps: AppDeps, body: GenerationBody, call: CallContext): Promise<ImagesResponseBody> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const model = imageModel(deps.registry, body.model, false);
  const options = imageOptions(body, model);
  deps.intake.screen(body.prompt, "prompt");
  return render(deps, call, model, body.prompt, options, sizeFor(model, options.want), null, performance.now());
}

export async function editImages(deps: AppDeps, input: EditInput, call: CallContext): Promise<ImagesResponseBody> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const started = performance.now();
  const { fields } = input;
  // A form names its model inside the body, past the edge's check of JSON bodies.
  deps.gate.checkModel(call.auth, fields.model);
  const model = imageModel(deps.registry, fields.model, true);
  const options = imageOptions(fields, model);
  // The prompt is screened before any image is fetched or decoded.
  deps.intake.screen(fields.prompt, "prompt");
  // The request's own time limit runs from its start: reading the images, queueing and rendering all count.
  const stop = new RunStop(call.signal, deps.config.requestTimeoutMs);
  const parts = input.mask ? [...input.images, input.mask] : input.images;
  const decoded = await stop.cut(deps.intake.images(parts, call.auth, stop.signal)).finally(() => stop.close());
  const items: CanvasImage[] = await Promise.all(parts.map(async ({ at }, i) => ({ image: decoded[i]!, at, size: await uprightSize(decoded[i]!, at) })));
  const images = items.slice(0, input.images.length);
  const natural = naturalAspect(images.map(({ size }) => size.width / size.height));
  const size = sizeFor(model, options.want, natural);
  const canvas = await composeCanvas(images, size.width, size.height, model.diffusion!.vaeScale, input.mask ? items.at(-1) : undefined);
  // A masked area is drawn anew (the whole schedule, as inpainting does); an unmasked edit re-renders the model's share
  // of it. High input fidelity keeps more of the input: half of either.
  const strength = (input.mask ? 1 : model.diffusion!.strength) * (fields.input_fidelity === "high" ? 0.5 : 1);
  return render(deps, call, model, fields.prompt, options, size, { canvas, strength }, started);
}

async function render(
  deps: AppDeps, call: CallContext, model: ModelEntry, prompt: string, options: ImageOptions, size: { width: number; height: number },
  edit: { canvas: Canvas; strength: number } | null, started: number,
): Promise<ImagesResponseBody> {
  const layout = model.diffusion!;
  const encoding = deps.promptTokenizers.get(model);
  const prompted = encoding.encode(prompt);
  const uncondIds = layout.guidanceScale > 1 ? encoding.encode("").ids : undefined;
  const first = options.seed ?? crypto.getRandomValues(new Uint32Array(1))[0]!;
  const init: RenderInit | undefined = edit
    ? { rgb: edit.canvas.rgb, strength: edit.strength, ...(edit.canvas.latentMask ? { mask: edit.canvas.latentMask } : {}) }
    : undefined;
  const renders: RenderRequest[] = Array.from({ length: options.n }, (_, i) => ({
    promptIds: prompted.ids, ...(uncondIds ? { uncondIds } : {}), guidance: layout.guidanceScale,
    width: size.width, height: size.height, steps: options.steps, seed: seedOf(first, i), ...(init ? { init } : {}),
  }));
  const images = await runRenders(deps, {
    scope: callScope(call, "images"),
    model, renders, promptTokens: prompted.tokens, clientSignal: call.signal,
    timeoutMs: Math.max(1, deps.config.requestTimeoutMs - (performance.now() - started)),
  });
  const encoded = await Promise.all(images.map((image) => encodeImage(finalPixels(image, edit?.canvas ?? null), image.width, image.height, options.format, options.compression)));
  return {
    created: Math.floor(Date.now() / 1000),
    data: encoded.map((bytes) => ({ b64_json: Buffer.from(bytes).toString("base64"), ...(prompted.truncated ? { revised_prompt: prompted.seen } : {}) })),
    usage: {
      input_tokens: prompted.tokens, input_tokens_details: { text_tokens: prompted.tokens, image_tokens: 0 },
      output_tokens: 0, total_tokens: prompted.tokens, images: images.length,
    },
    size: `${size.width}x${size.height}`,
    quality: options.quality,
    output_format: options.format,
    background: "opaque",
  };
}

/** A masked edit keeps every pixel outside its mask exactly as the canvas had it. */
function finalPixels(image: Rendered, canvas: Canvas | null): Uint8Array {
  return canvas?.weights ? overlay(image.rgb, canvas.rgb, canvas.weights) : image.rgb;
}
