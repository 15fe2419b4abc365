// The image model builder's public API: specs, presets and variants, the folder build, and the analytic UNet for sampler tests.
export { analyticUnetGraph, writeAnalyticUnet } from "./analytic-unet.ts";
export { buildImageModel, imageParamCounts, type ImageBuildOptions } from "./build-image.ts";
export { buildClipVocabulary, clipWords, END_OF_TEXT, END_OF_WORD, START_OF_TEXT, type ClipVocabulary } from "./clip-bpe.ts";
export { SCALING_FACTOR } from "./image-files.ts";
export { IMAGE_PRESETS, imageVariant, TINY_IMAGE_MODEL_ID, type ImageVariantOptions } from "./image-presets.ts";
export {
  CLIP_CONTEXT,
  IMAGE_BUILDER_VERSION,
  imageSpecHash,
  isImageSpec,
  pixelMultiple,
  validateImageSpec,
  type ImageModelSpec,
} from "./image-spec.ts";
