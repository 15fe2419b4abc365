// kiln's deterministic model builder: public API (specs, presets, buildModel, ensureDefaultModel).
export { buildModel, type BuildOptions } from "./build.ts";
export { ensureDefaultModel, installModel, isIdenticalBuild, DEFAULT_DTYPES, type InstallOptions } from "./install.ts";
export { DEFAULT_MODEL_ID, PRESETS, specHash, validateSpec, type Dtype, type ModelSpec } from "./spec.ts";
export { SPECIAL_TOKENS } from "./tokenizer.ts";
