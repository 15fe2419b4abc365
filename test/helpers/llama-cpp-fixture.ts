// The set-up every llama.cpp comparison file shares: a temp dir for the files it writes, and llama.cpp (node-llama-cpp's
// prebuilt CPU binary) loaded once before the file's tests and disposed, with the dir, after them.
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { loadLlamaCpp } from "../load/llama-cpp-runtime.ts";

/** Registers the hooks; `onLoad` receives llama.cpp before the first test. Returns the temp dir. */
export function llamaCppFixture(prefix: string, onLoad: (llama: Llama) => void): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  let llama: Llama | undefined;
  beforeAll(async () => {
    const r = await loadLlamaCpp();
    if ("error" in r) throw new Error(r.error);
    llama = r.llama;
    onLoad(llama);
  });
  afterAll(async () => {
    await llama?.dispose();
    rmSync(root, { recursive: true, force: true });
  });
  return root;
}
