// The operator's content policy: prompt patterns and hashes of refused media, read from one JSON file at start.
// Empty by default. A match is a 400 content_policy_violation; the images endpoints check the same policy.
import { readFileSync } from "node:fs";
import { ApiError } from "../errors/api-error.ts";

export interface ContentPolicy {
  /** Case-insensitive regular expressions; a prompt any of them matches is refused. */
  promptPatterns: RegExp[];
  /** Lower-case hex SHA-256 of media bytes that are refused wherever they appear. */
  refusedMedia: ReadonlySet<string>;
}

/** The policy file cannot be used: start-up stops with this one line. */
export class ContentPolicyError extends Error {}

export const EMPTY_POLICY: ContentPolicy = { promptPatterns: [], refusedMedia: new Set() };

const SHA256 = /^[0-9a-f]{64}$/;

/** Parses the policy file's text: `{"prompt_patterns": [regex…], "refused_media_sha256": [hex…]}`; throws naming the fault. */
export function parseContentPolicy(text: string): ContentPolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`is not JSON (${(e as Error).message})`);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("must be a JSON object");
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => k !== "prompt_patterns" && k !== "refused_media_sha256");
  if (unknown.length) throw new Error(`has unknown field(s) ${unknown.join(", ")}; use prompt_patterns and refused_media_sha256`);
  const list = (k: string): string[] => {
    const v = o[k] ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw new Error(`${k} must be an array of strings`);
    return v as string[];
  };
  const promptPatterns = list("prompt_patterns").map((p, i) => {
    try {
      return new RegExp(p, "iu");
    } catch (e) {
      throw new Error(`prompt_patterns[${i}] is not a valid regular expression (${(e as Error).message})`);
    }
  });
  const hashes = list("refused_media_sha256").map((h) => h.trim().toLowerCase());
  const badHash = hashes.findIndex((h) => !SHA256.test(h));
  if (badHash >= 0) throw new Error(`refused_media_sha256[${badHash}] is not a hex SHA-256`);
  return { promptPatterns, refusedMedia: new Set(hashes) };
}

/** The policy at `path` (unset: the empty policy); throws a one-line reason start-up reports. */
export function loadContentPolicy(path: string | undefined): ContentPolicy {
  if (!path) return EMPTY_POLICY;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ContentPolicyError(`the content policy file ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return parseContentPolicy(text);
  } catch (e) {
    throw new ContentPolicyError(`the content policy file ${path} ${(e as Error).message}`);
  }
}

const refused = (what: string, param: string | null) =>
  ApiError.badRequest(`${what} was refused by this server's content policy.`, param, "content_policy_violation");

/** Throws 400 content_policy_violation when a pattern matches `text`. */
export function checkPrompt(policy: ContentPolicy, text: string, param: string | null = null): void {
  if (policy.promptPatterns.some((re) => re.test(text))) throw refused("The prompt", param);
}

/** Throws 400 content_policy_violation naming `at` when the medium's hash is refused. */
export function checkMedium(policy: ContentPolicy, sha256: string, at: string): void {
  if (policy.refusedMedia.has(sha256)) throw refused(at, at);
}
