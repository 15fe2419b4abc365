// A real kiln on the tiny model plus the official openai client pointed at it, for the SDK tests.
import OpenAI from "openai";
import { startTestServer, type TestServer } from "./server.ts";

export async function openaiTestServer(env: Record<string, string> = {}): Promise<{ server: TestServer; client: OpenAI }> {
  const server = await startTestServer(env);
  return { server, client: new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 }) };
}
