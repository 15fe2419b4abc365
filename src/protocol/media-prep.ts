// Messages between an inference worker and its media preprocessing worker (workers/media-prep-worker.ts).
import type { MediaInput } from "./text.ts";

export type ToPrep =
  | { type: "load"; dir: string; kinds: { image: boolean; audio: boolean } }
  | { type: "prepare"; id: number; input: MediaInput };

export type FromPrep =
  | { type: "loaded" }
  | { type: "load_error"; message: string }
  | { type: "prepared"; id: number; data: Float32Array; dims: number[] }
  /** `safe`: the message is our own check's (fit for the sequence's error), not a library's text. */
  | { type: "failed"; id: number; message: string; safe: boolean };
