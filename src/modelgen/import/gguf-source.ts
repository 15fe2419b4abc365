import type { ImportSource } from "./hf-folder.ts";
export function openGgufFile(path: string, _id: string | undefined): ImportSource {
  throw new Error(`${path}: GGUF import pending`);
}
