// JSON bodies are checked for nesting depth before JSON.parse and schema validation: validating 100,000 nested
// arrays overflows the stack and takes seconds, a depth scan over the raw bytes takes microseconds per KB.
import { ApiError } from "../errors/api-error.ts";

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `bytes` holds at most `limit` of `{` and `[` in all (so no nesting can pass `limit`); native scans only. */
function fewOpeners(bytes: Uint8Array, limit: number): boolean {
  let count = 0;
  for (const opener of [OPEN_OBJECT, OPEN_ARRAY]) {
    for (let at = bytes.indexOf(opener); at >= 0; at = bytes.indexOf(opener, at + 1)) if (++count > limit) return false;
  }
  return true;
}

/** The deepest nesting of `{`/`[` outside strings, stopping early once `limit` is passed. */
export function jsonDepth(bytes: Uint8Array, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
      continue;
    }
    if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
  }
  return max;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Parses a JSON request body, refusing empty bodies, bad UTF-8, bad JSON and nesting deeper than `maxDepth` with 400s. */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): unknown {
  if (bytes.length === 0) throw ApiError.badRequest("The request body is empty. Send a JSON object with Content-Type: application/json.");
  // Most bodies (a long prompt is mostly text) have few brackets at all: two native scans settle it.
  if (!fewOpeners(bytes, maxDepth) && jsonDepth(bytes, maxDepth) > maxDepth) {
    throw ApiError.badRequest(`The request body is nested more than ${maxDepth} levels deep.`);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw ApiError.badRequest("The request body is not valid UTF-8.");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw ApiError.badRequest("The request body is not valid JSON. Send a JSON object with Content-Type: application/json.");
  }
}
