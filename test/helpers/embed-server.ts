// A real kiln serving the tiny text model and the built-in embedding model side by side, with the official openai
// client pointed at it, for the embeddings tests.
import { symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import OpenAI from "openai";
import { tempDir } from "./kiln.ts";
import { startTestServer, type TestServer } from "./server.ts";
import { tinyEmbedModelDir, tinyModelDir } from "./tiny-model.ts";

/** A models folder linking kiln-tiny-v1 and kiln-embed-tiny-v1 (no copies); returns the embedding model's path in it. */
export async function textAndEmbedModels(): Promise<string> {
  const dir = tempDir("kiln-embed-models-");
  for (const model of [await tinyModelDir(), await tinyEmbedModelDir()]) symlinkSync(model, join(dir, basename(model)));
  return join(dir, basename(await tinyEmbedModelDir()));
}

export async function embedTestServer(env: Record<string, string> = {}): Promise<{ server: TestServer; client: OpenAI }> {
  const server = await startTestServer(env, { modelDir: await textAndEmbedModels() });
  return { server, client: new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 }) };
}
