// The requests real clients sent (../shared/clients/ beside the repository, one JSON per request): read one, and
// replay it against a test server with the server's key, as the corpus's README describes.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestServer } from "./server.ts";

export const CLIENT_CORPUS = join(import.meta.dir, "..", "..", "..", "shared", "clients");

export interface ClientRequest {
  client: string;
  scenario: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  expected: string;
}

/** The named request (file name without .json), or null where the corpus is not beside the repository. */
export function clientRequest(name: string): ClientRequest | null {
  const file = join(CLIENT_CORPUS, `${name}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ClientRequest) : null;
}

/** Sends the request as the client did, with the server's key (x-api-key on Messages) and `body` in place of its own. */
export function replay(s: TestServer, req: ClientRequest, body: Record<string, unknown> = req.body): Promise<Response> {
  const auth: Record<string, string> = req.path.startsWith("/v1/messages") ? { "x-api-key": s.key } : { authorization: `Bearer ${s.key}` };
  return fetch(`${s.url}${req.path}`, { method: req.method, headers: { ...req.headers, ...auth }, body: JSON.stringify(body) });
}
