import { describe, expect, test } from "bun:test";
import { capabilityLabels, describeWorkers, fmtBytes, fmtPrice, mediaFacts, type ModelView, workerSummary } from "../../../src/dashboard/tabs/model-facts.ts";

const base: ModelView = {
  id: "m-1", object: "model", created: 0, owned_by: "kiln", display_name: "M", context_length: 4096,
  capabilities: { chat: true, completions: true, tools: false, reasoning: true, vision: false, audio: false, image_generation: false, embeddings: false },
  pricing: { input_per_million: 0.1, cached_input_per_million: 0.1, output_per_million: 0.4, per_image: null }, status: "operational",
};

describe("model facts", () => {
  test("prices as billing takes them: to the micro-unit, at least two decimals", () => {
    expect(fmtPrice(0.1)).toBe("0.10");
    expect(fmtPrice(10)).toBe("10.00");
    expect(fmtPrice(0.000001)).toBe("0.000001");
    // Below a micro-unit rounds as costMicros rounds it.
    expect(fmtPrice(0.0000004)).toBe("0.00");
    expect(fmtPrice(1.23456789)).toBe("1.234568");
    expect(fmtPrice(null)).toBe("–");
  });

  test("capabilities in a fixed order", () => {
    expect(capabilityLabels(base.capabilities)).toEqual(["chat", "completions", "reasoning"]);
    expect(capabilityLabels({ chat: false, completions: false, tools: false, reasoning: false, vision: false, audio: true, image_generation: true, embeddings: false })).toEqual(["audio", "image generation"]);
  });

  test("media and image facts only where the model has them", () => {
    expect(mediaFacts(base)).toEqual([]);
    expect(mediaFacts({ ...base, media: { image: { size: 336, patch_size: 14, tokens_per_image: 576 }, audio: { sample_rate: 16000, tokens_per_second: 12.4567 } } })).toEqual([
      ["Image input", "336×336 px, 14 px patches, 576 prompt tokens per image"],
      ["Audio input", "16,000 Hz, about 12.5 prompt tokens per second"],
    ]);
    expect(mediaFacts({ ...base, images: { resolution: 512, sizes: { "1:1": "512x512", "16:9": "704x384" }, steps: { low: 2, medium: 4, high: 8 }, edits: false } })).toEqual([
      ["Image output", "512 px native; 1:1 512x512, 16:9 704x384"],
      ["Denoising steps", "low 2, medium 4, high 8"],
      ["Edits", "no (no VAE encoder)"],
    ]);
  });

  test("a model's workers: counted by state, dead ones left out; null when no workers are reported at all", () => {
    expect(workerSummary(null, "a")).toBeNull();
    const workers = [
      { workerId: 1, model: "a", state: "ready", held: 2, rssBytes: 100 },
      { workerId: 2, model: "a", state: "loading", held: 0, rssBytes: 50 },
      { workerId: 3, model: "a", state: "dead", held: 1, rssBytes: 999 },
      { workerId: 4, model: "b", held: 1, rssBytes: 10 },
    ];
    const a = workerSummary(workers, "a")!;
    expect(a).toEqual({ total: 2, ready: 1, loading: 1, busy: 2, rssBytes: 150 });
    expect(describeWorkers(a)).toBe("1 ready, 1 loading");
    // A source without states reports serving workers.
    expect(describeWorkers(workerSummary(workers, "b")!)).toBe("1 ready");
    expect(describeWorkers(workerSummary(workers, "c")!)).toBe("none");
  });

  test("bytes as MiB or GiB", () => {
    expect(fmtBytes(512 * 1024 * 1024)).toBe("512.0 MiB");
    expect(fmtBytes(3.5 * 1024 * 1024 * 1024)).toBe("3.5 GiB");
  });
});
