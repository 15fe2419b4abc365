// The Models tab's words and numbers for one model, from the object GET /v1/models answers with (so the two never
// disagree) and from what the workers report. Pure, so each is tested apart from the page.
import type { ModelObject } from "../../api/models/schema.ts";
import { MICROS_PER_UNIT } from "../../billing/cost.ts";
import { formatMicros } from "../../billing/money.ts";
import type { WorkerStat } from "../../metrics/metrics.ts";

export type ModelView = typeof ModelObject.static;

const CAPABILITY_LABELS: [keyof ModelView["capabilities"], string][] = [
  ["chat", "chat"],
  ["completions", "completions"],
  ["tools", "tools"],
  ["reasoning", "reasoning"],
  ["vision", "vision"],
  ["audio", "audio"],
  ["image_generation", "image generation"],
  ["embeddings", "embeddings"],
];

/** The capabilities a model has, in a fixed order. */
export function capabilityLabels(caps: ModelView["capabilities"]): string[] {
  return CAPABILITY_LABELS.filter(([k]) => caps[k]).map(([, label]) => label);
}

/** A manifest price as billing charges it: taken to the micro-unit first (src/billing/cost.ts), then written out. */
export function fmtPrice(price: number | null): string {
  return price === null ? "–" : formatMicros(Math.round(price * MICROS_PER_UNIT));
}

/** Label and text of each media or image fact a model has (none for a text-only model). */
export function mediaFacts(m: ModelView): [string, string][] {
  const out: [string, string][] = [];
  const image = m.media?.image;
  if (image) out.push(["Image input", `${image.size}×${image.size} px, ${image.patch_size} px patches, ${image.tokens_per_image} prompt tokens per image`]);
  const audio = m.media?.audio;
  if (audio) out.push(["Audio input", `${audio.sample_rate.toLocaleString("en-US")} Hz, about ${Math.round(audio.tokens_per_second * 10) / 10} prompt tokens per second`]);
  const made = m.images;
  if (made) {
    out.push(["Image output", `${made.resolution} px native; ${Object.entries(made.sizes).map(([ratio, size]) => `${ratio} ${size}`).join(", ")}`]);
    out.push(["Denoising steps", `low ${made.steps.low}, medium ${made.steps.medium}, high ${made.steps.high}`]);
    out.push(["Edits", made.edits ? "yes" : "no (no VAE encoder)"]);
  }
  return out;
}

export interface WorkerSummary {
  total: number;
  ready: number;
  loading: number;
  /** Sequences (or renders) its workers hold right now. */
  busy: number;
  rssBytes: number;
}

/** A model's workers as reported; null when the process reports no workers at all (not the same as none for this model). */
export function workerSummary(workers: WorkerStat[] | null, model: string): WorkerSummary | null {
  if (workers === null) return null;
  const mine = workers.filter((w) => w.model === model && w.state !== "dead");
  return {
    total: mine.length,
    // A source that reports no state lists only workers it counts as serving.
    ready: mine.filter((w) => (w.state ?? "ready") === "ready").length,
    loading: mine.filter((w) => w.state === "loading").length,
    busy: mine.reduce((sum, w) => sum + w.held, 0),
    rssBytes: mine.reduce((sum, w) => sum + w.rssBytes, 0),
  };
}

/** "2 ready", "1 ready, 1 loading", "none". */
export function describeWorkers(s: WorkerSummary): string {
  if (!s.total) return "none";
  return s.loading ? `${s.ready} ready, ${s.loading} loading` : `${s.ready} ready`;
}

/** Bytes as MiB or GiB, one decimal. */
export function fmtBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${mib.toFixed(1)} MiB`;
}
