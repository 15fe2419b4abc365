// How to name a worker entry point so `new Worker(...)` finds it under `bun src/main.ts` and in the compiled executable.

/** Worker entry points, relative to the project root; build/compile.ts lists each as an extra entrypoint. */
export const WORKER_ENTRIES = {
  inference: "workers/inference-worker.ts",
  tokenizer: "workers/tokenizer-worker.ts",
  doctor: "src/native/doctor-worker.ts",
  media: "workers/media-worker.ts",
  mediaPrep: "workers/media-prep-worker.ts",
  image: "workers/image-worker.ts",
  embed: "workers/embed-worker.ts",
} as const;

/**
 * In the executable, Bun maps `./<path as given to Bun.build>` to the embedded module (build/compile.ts sets
 * the build root to the project root, so the paths above are the ones it was given). From source, an absolute
 * file URL keeps the worker independent of the working directory.
 */
export function workerEntryUrl(entry: string, compiled: boolean = Bun.isStandaloneExecutable): string | URL {
  if (compiled) return `./${entry}`;
  return new URL(`../../${entry}`, import.meta.url);
}

export function inferenceWorkerUrl(): string | URL {
  return workerEntryUrl(WORKER_ENTRIES.inference);
}

export function imageWorkerUrl(): string | URL {
  return workerEntryUrl(WORKER_ENTRIES.image);
}

export function embedWorkerUrl(): string | URL {
  return workerEntryUrl(WORKER_ENTRIES.embed);
}

export function tokenizerWorkerUrl(): string | URL {
  return workerEntryUrl(WORKER_ENTRIES.tokenizer);
}
