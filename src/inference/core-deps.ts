// What the core needs from the scheduler and the tokenizers: only the calls it makes, so a test's fake is type-checked.
import type { ModelEntry } from "../models/registry.ts";
import type { SeqEvent, SeqRequest } from "../scheduler/scheduler.ts";
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

export interface CoreDeps {
  scheduler: CoreScheduler;
  tokenizers: CoreTokenizers;
}
