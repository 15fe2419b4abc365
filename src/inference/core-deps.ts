// What the core needs from the scheduler and the tokenizers: only the calls it makes, so a test's fake is type-checked.
import type { ModelEntry } from "../models/registry.ts";
import type { SeqEvent, SeqRequest } from "../scheduler/scheduler.ts";
import type { MediaPart } from "./conversation.ts";
import type { DecodedImage } from "./media.ts";
import type { CoreRequest } from "./request.ts";
import type { ModelTokenizer } from "./tokenizer.ts";

/** The scheduler as the core uses it (src/scheduler/scheduler.ts). */
export interface CoreScheduler {
  /** Throws 503 backend_unavailable unless a worker for the model is ready. */
  assertServing(model: string): void;
  /** Admits a group of sequences atomically and returns one event stream per sequence, or throws 503. */
  submit(requests: SeqRequest[]): AsyncIterable<SeqEvent>[];
}

/** The per-model tokenizers as the core uses them (src/inference/tokenizer.ts). */
export interface CoreTokenizers {
  get(model: ModelEntry): Promise<ModelTokenizer>;
}

/**
 * What reads a request's media and screens its prompt before the prompt is built (src/media/intake.ts): decodes
 * every media part into place, or throws a 400 naming the item. Without it, a request with media is refused.
 */
export interface CoreIntake {
  /** `who`: the caller's team (whose files a request may name) and key (whose permissions apply). */
  prepare(request: CoreRequest, model: ModelEntry, who: { teamId: number; keyId: number }, signal: AbortSignal): Promise<void>;
  /**
   * The images an images request names, read, decoded and screened in order under the same limits as a prompt's
   * media (the bytes in all; the caller bounds their count); the first refusal is thrown as a 400 naming its item (`at`).
   */
  images(parts: MediaPart[], who: { teamId: number; keyId: number }, signal: AbortSignal): Promise<DecodedImage[]>;
  /** Throws 400 content_policy_violation (naming `param`) when the operator's policy refuses the prompt. */
  screen(prompt: string, param: string): void;
}

export interface CoreDeps {
  scheduler: CoreScheduler;
  tokenizers: CoreTokenizers;
}
