// JSON bodies are checked for nesting depth before JSON.parse and schema validation: validating 100,000 nested
// arrays overflows the stack and takes seconds. The check and the UTF-8 decoding run chunk by chunk as the body
// arrives, so a large body costs the event loop one JSON.parse once it is complete, not a pass per step.
import { ApiError } from "../errors/api-error.ts";

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Tracks the nesting depth of `{`/`[` outside strings across chunks; `max` stops growing once past `limit`. */
export class DepthScanner {
  max = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limit = Infinity) {}

  push(bytes: Uint8Array): void {
    const n = bytes.length;
    // Next quote and backslash at or after i (n: none), found natively: a long string (a prompt) is crossed in two
    // scans instead of a loop over its bytes. Each is searched again only once i has passed it, so the work stays O(n).
    let quote = -1;
    let slash = -1;
    let i = 0;
    while (i < n && this.max <= this.limit) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        if (quote < i) quote = indexOr(bytes, QUOTE, i, n);
        if (slash < i) slash = indexOr(bytes, BACKSLASH, i, n);
        if (slash < quote) {
          this.escaped = true;
          i = slash + 1;
        } else {
          this.inString = quote === n;
          i = quote + 1;
        }
        continue;
      }
      const b = bytes[i++]!;
      if (b === QUOTE) this.inString = true;
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++this.depth > this.max) this.max = this.depth;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) this.depth--;
    }
  }
}

function indexOr(bytes: Uint8Array, byte: number, from: number, none: number): number {
  const at = bytes.indexOf(byte, from);
  return at < 0 ? none : at;
}

/** The deepest nesting of `{`/`[` outside strings, stopping early once `limit` is passed. */
export function jsonDepth(bytes: Uint8Array, limit = Infinity): number {
  const scanner = new DepthScanner(limit);
  scanner.push(bytes);
  return scanner.max;
}

const EMPTY = "The request body is empty. Send a JSON object with Content-Type: application/json.";
const NOT_JSON = "The request body is not valid JSON. Send a JSON object with Content-Type: application/json.";

/** A JSON body fed chunk by chunk: decoded and depth-checked as it arrives, parsed at the end. Errors are 400s. */
export class JsonBodyParser {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private readonly scanner: DepthScanner;
  private parts: string[] = [];
  private bytes = 0;

  constructor(private readonly maxDepth: number) {
    this.scanner = new DepthScanner(maxDepth);
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    this.scanner.push(chunk);
    if (this.scanner.max > this.maxDepth) throw tooDeep(this.maxDepth);
    try {
      this.parts.push(this.decoder.decode(chunk, { stream: true }));
    } catch {
      throw ApiError.badRequest("The request body is not valid UTF-8.");
    }
  }

  finish(): unknown {
    if (this.bytes === 0) throw ApiError.badRequest(EMPTY);
    let text: string;
    try {
      text = this.parts.join("") + this.decoder.decode();
    } catch {
      throw ApiError.badRequest("The request body is not valid UTF-8.");
    }
    this.parts = [];
    try {
      return JSON.parse(text);
    } catch {
      throw ApiError.badRequest(NOT_JSON);
    }
  }
}

function tooDeep(maxDepth: number): ApiError {
  return ApiError.badRequest(`The request body is nested more than ${maxDepth} levels deep.`);
}

/** Parses a whole JSON request body, refusing empty bodies, bad UTF-8, bad JSON and nesting deeper than `maxDepth` with 400s. */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): unknown {
  const parser = new JsonBodyParser(maxDepth);
  parser.push(bytes);
  return parser.finish();
}
