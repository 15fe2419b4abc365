// Worker entry naming: an absolute file URL from source, the build-root-relative path inside the executable.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inferenceWorkerUrl, WORKER_ENTRIES, workerEntryUrl } from "../../../src/native/worker-url.ts";

test("from source: a file URL to the project's workers folder, whatever the cwd", () => {
  const url = workerEntryUrl("workers/x.ts", false);
  expect(url).toBeInstanceOf(URL);
  expect(fileURLToPath(url as URL)).toBe(fileURLToPath(new URL("../../../workers/x.ts", import.meta.url)));
});

test("compiled: the path as given to Bun.build, relative to the build root", () => {
  expect(workerEntryUrl("workers/inference-worker.ts", true)).toBe("./workers/inference-worker.ts");
});

test("inferenceWorkerUrl names workers/inference-worker.ts when running from source", () => {
  expect(WORKER_ENTRIES.inference).toBe("workers/inference-worker.ts");
  const url = inferenceWorkerUrl() as URL;
  expect(url.pathname.endsWith("/workers/inference-worker.ts")).toBe(true);
  // The file belongs to another engineer; when it exists, the URL must point at it.
  if (existsSync(new URL("../../../workers/inference-worker.ts", import.meta.url))) expect(existsSync(url)).toBe(true);
});
