// Reads the body of one tool call as the model wrote it between its markers (`{"name": …, "arguments": {…}}`):
// strictly when it is whole and well formed, leniently when it was cut short or is malformed, so a call the model
// began is still reported as a call (with the arguments text it wrote) rather than as markup in the answer.
import { scanOutsideStrings } from "./json-scan.ts";

export interface CallBody {
  name: string;
  /** The arguments as JSON text: exact for a well-formed call; as written (possibly not valid JSON) otherwise. */
  arguments: string;
}

/** `{"name": "...", "arguments": {...}}` → name and arguments as a JSON string; null when malformed. */
export function parseToolCallBody(body: string): CallBody | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.trim());
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string" || !name) return null;
  if (args === undefined) return { name, arguments: "{}" };
  if (typeof args === "string") {
    try {
      JSON.parse(args);
      return { name, arguments: args };
    } catch {
      return null;
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  return { name, arguments: rawArguments(body) ?? JSON.stringify(args) };
}

/** The body's opening `{"name": "<name>"` and, if present, `, "arguments": `; the name decoded. */
const HEAD = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*(,\s*"arguments"\s*:\s*)?/;

/**
 * A call the model did not write whole or well: the name (which must be complete) and the arguments text after
 * `"arguments":`. For a cut body that text is kept as written (a prefix of the arguments); for a whole but malformed
 * one the outer object's closing brace is taken off when the arguments do not already balance without it. A body
 * whose arguments never began has none ("" when cut, "{}" when whole). Null when not even the name can be read.
 */
export function readPartialCall(body: string, whole: boolean): CallBody | null {
  const m = HEAD.exec(body);
  if (!m) return null;
  let name: string;
  try {
    name = JSON.parse(`"${m[1]!}"`) as string;
  } catch {
    return null;
  }
  if (!name) return null;
  if (!m[2]) return { name, arguments: whole ? "{}" : "" };
  let args = body.slice(m[0].length);
  if (!whole) return { name, arguments: args.trimEnd() };
  args = args.trim();
  if (args.endsWith("}") && braceBalance(args) < 0) args = args.slice(0, -1).trimEnd();
  return { name, arguments: args || "{}" };
}

/** Opening minus closing braces outside strings. */
function braceBalance(text: string): number {
  let depth = 0;
  scanOutsideStrings(text, (ch) => {
    if (ch === "{") depth++;
    else if (ch === "}") depth--;
  });
  return depth;
}

/**
 * The `arguments` object's own text with insignificant whitespace dropped: numbers keep the digits the model
 * wrote (JSON.stringify would turn one past the double range into null). Null when the body is not one object.
 */
function rawArguments(body: string): string | null {
  let depth = 0;
  let key = "";
  let out = "";
  let start = -1;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < body.length && body[j] !== '"') j += body[j] === "\\" ? 2 : 1;
      const str = body.slice(i, j + 1);
      if (start >= 0) out += str;
      else if (depth === 1) key = str;
      i = j;
      continue;
    }
    if (/\s/.test(ch)) continue;
    if (start >= 0) out += ch;
    if (ch === "{" || ch === "[") {
      if (depth === 1 && key === '"arguments"' && start < 0 && ch === "{") {
        start = depth;
        out = ch;
      }
      depth++;
    } else if (ch === "}" || ch === "]") {
      depth--;
      if (start >= 0 && depth === start) return out;
    } else if (ch === ",") key = "";
  }
  return null;
}
