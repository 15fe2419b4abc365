// kiln's deterministic model builder: public API (specs, presets, media helpers, buildModel, the image and embedding builders, ensureDefaultModel, the GPU formats and nodePlacement).
export { buildModel, type BuildOptions } from "./build.ts";
export { BUILTIN_MODEL_IDS, builtinDtypes, ensureDefaultModel, installModel, isIdenticalBuild, DEFAULT_DTYPES, type InstallOptions } from "./install.ts";
export { audioFeatureCount, imageTokens, mediaArchitecture, type AudioSpec, type MediaArchitecture, type VisionSpec } from "./media-spec.ts";
export { DEFAULT_MEDIA_MODEL_ID, DEFAULT_MODEL_ID, PRESETS, specHash, validateSpec, withoutAudio, withoutVision, type Dtype, type ModelSpec } from "./spec.ts";
export { MEDIA_TOKENS, SPECIAL_TOKENS } from "./tokenizer.ts";
export * from "./diffusion/index.ts";
export { buildEmbeddingModel } from "./embedding-files.ts";
export { EMBEDDING_PRESETS, embeddingSpecHash, isEmbeddingSpec, TINY_EMBED_MODEL_ID, type EmbeddingModelSpec } from "./embedding-spec.ts";
export { PRESET_NAMES, presetSpec, type AnySpec } from "./presets.ts";
export { GPU_DTYPES, isGpuDtype, type GpuDtype } from "./gpu-decoder-graph.ts";
export { DEVICE_COMPUTE_OPS, nodePlacement, nodesOffDevice, WEBGPU_PROVIDER, type NodePlacement, type NodeRun } from "./node-placement.ts";
