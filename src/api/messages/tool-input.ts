// The `input` object of a tool_use block from the arguments text the model wrote: exact when the text is a JSON
// object; for a call cut by max_tokens (or written malformed) the object its text begins, completed where it stops,
// which is what Anthropic's SDK reads from a partial input_json_delta buffer too. Numbers keep the model's own text
// (JSON.rawJSON), so the input serializes back to the values the model wrote, never rounded or rewritten.
import { scanOutsideStrings } from "../../inference/json-scan.ts";

/** How far back a cut is searched for a point where the text can be completed; past it the input is empty. */
const MAX_BACKTRACK = 256;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

type RawJson = { rawJSON(text: string): unknown };

/** JSON.parse, each number kept as its source text, so JSON.stringify writes it back byte for byte. */
function parseKeepingNumbers(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined ? (JSON as unknown as RawJson).rawJSON(context.source) : value,
  );
}

/** What closes `prefix`: an open string's quote, then each open container's bracket, innermost first. */
function closers(prefix: string): string {
  const stack: string[] = [];
  const inString = scanOutsideStrings(prefix, (ch) => {
    if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") stack.pop();
  });
  return (inString ? '"' : "") + stack.reverse().join("");
}

/** The tool input for `text`; `exact` is false when the text had to be completed (or could not be read at all). */
export function toolInput(text: string): { input: Json; exact: boolean } {
  const trimmed = text.trim();
  if (!trimmed) return { input: {}, exact: true };
  try {
    const v = parseKeepingNumbers(trimmed);
    if (isObject(v)) return { input: v, exact: true };
  } catch {
    // completed below
  }
  for (let cut = trimmed.length; cut > 0 && cut >= trimmed.length - MAX_BACKTRACK; cut--) {
    // A dangling comma or colon cannot be completed; the key before a colon is dropped by cutting further back.
    const prefix = trimmed.slice(0, cut).replace(/[\s,:]+$/, "");
    try {
      const v = parseKeepingNumbers(prefix + closers(prefix));
      if (isObject(v)) return { input: v, exact: false };
    } catch {
      // cut further back
    }
  }
  return { input: {}, exact: false };
}
