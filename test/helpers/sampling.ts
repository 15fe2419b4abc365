// Sampling settings for tests and load scenarios: greedy (temperature 0) unless overridden.
import type { SamplingParams } from "../../src/protocol/text.ts";

export const greedyParams = (maxTokens: number, extra: Partial<SamplingParams> = {}): SamplingParams => ({
  maxTokens,
  temperature: 0,
  topP: 1,
  seed: 0,
  stop: [],
  stopTokenIds: [],
  ...extra,
});
