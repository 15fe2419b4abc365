// A models folder holding both built-in text models (kiln-tiny-v1 and kiln-tiny-omni-v1), as `kiln serve` offers
// them, for tests that start a kiln with the built-ins (links to the shared build cache, no copies).
import { symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "./kiln.ts";
import { tinyModelDir, tinyOmniModelDir } from "./tiny-model.ts";

/** The path of kiln-tiny-v1 inside a fresh folder that also holds kiln-tiny-omni-v1 (startTestServer's modelDir). */
export async function builtinTextModels(): Promise<string> {
  const dir = tempDir("kiln-builtins-");
  for (const model of [await tinyModelDir(), await tinyOmniModelDir()]) symlinkSync(model, join(dir, basename(model)));
  return join(dir, basename(await tinyModelDir()));
}
