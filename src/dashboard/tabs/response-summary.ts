// What the page of one stored response shows from its response JSON (the object the API returns): the output text,
// the usage, the error or why it is incomplete, the other output items; and what a cancel from the page came to.
// Pure and defensive: a row's JSON is read as untrusted shape (an old or damaged row must still show a page).

/** The most output text the page shows: a long answer is cut here, and the page says how much more there is. */
export const MAX_SHOWN_CHARS = 20_000;

export interface ResponseUsage {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
  total: number;
}

export interface ResponseSummary {
  /** The readable JSON: false when the row's JSON could not be parsed (the page says so). */
  readable: boolean;
  text: string;
  /** Characters of output text in all; more than `text.length` when it was cut. */
  textChars: number;
  usage: ResponseUsage | null;
  error: { code: string; message: string } | null;
  incompleteReason: string | null;
  completedAt: number | null;
  /** Output items that are not messages (function calls, reasoning, web searches), as type and name. */
  otherItems: { type: string; name: string | null }[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const str = (v: unknown) => (typeof v === "string" ? v : null);

/** The output_text parts of the output's messages: parts joined as they are, messages apart by a blank line. */
export function outputText(output: unknown): string {
  if (!Array.isArray(output)) return "";
  const messages: string[] = [];
  for (const item of output) {
    if (!isObject(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    const parts = item.content.filter((p): p is Json => isObject(p) && p.type === "output_text" && typeof p.text === "string");
    if (parts.length) messages.push(parts.map((p) => p.text as string).join(""));
  }
  return messages.join("\n\n");
}

/** At most `max` characters of `text`, never ending in half of a surrogate pair. */
export function clipText(text: string, max = MAX_SHOWN_CHARS): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

function usageOf(u: unknown): ResponseUsage | null {
  if (!isObject(u)) return null;
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  return {
    input,
    cached: isObject(u.input_tokens_details) ? num(u.input_tokens_details.cached_tokens) : 0,
    output,
    reasoning: isObject(u.output_tokens_details) ? num(u.output_tokens_details.reasoning_tokens) : 0,
    total: typeof u.total_tokens === "number" ? u.total_tokens : input + output,
  };
}

export function summarizeResponse(responseJson: string): ResponseSummary {
  let r: unknown;
  try {
    r = JSON.parse(responseJson);
  } catch {
    r = null;
  }
  if (!isObject(r)) return { readable: false, text: "", textChars: 0, usage: null, error: null, incompleteReason: null, completedAt: null, otherItems: [] };
  const full = outputText(r.output);
  const error = isObject(r.error) ? { code: str(r.error.code) ?? "error", message: str(r.error.message) ?? "" } : null;
  const otherItems = (Array.isArray(r.output) ? r.output : [])
    .filter((item): item is Json => isObject(item) && item.type !== "message")
    .map((item) => ({ type: str(item.type) ?? "unknown", name: str(item.name) }));
  return {
    readable: true,
    text: clipText(full),
    textChars: full.length,
    usage: usageOf(r.usage),
    error,
    incompleteReason: isObject(r.incomplete_details) ? str(r.incomplete_details.reason) : null,
    completedAt: typeof r.completed_at === "number" ? r.completed_at : null,
    otherItems,
  };
}

const ENDED = new Set(["completed", "incomplete", "failed", "cancelled"]);

/**
 * What a cancel from the page came to, from the response's status before and after the API's cancel ran: "done"
 * (it ended cancelled), "pending" (its run has not stopped yet; it ends cancelled when it does), or "refused" (it
 * had ended before: nothing changed).
 */
export function cancelOutcome(id: string, before: string, after: string): { kind: "done" | "pending" | "refused"; message: string } {
  if (before === "cancelled") return { kind: "refused", message: `Response ${id} was already cancelled.` };
  if (after === "cancelled") return { kind: "done", message: `Cancelled response ${id}.` };
  if (!ENDED.has(after)) {
    return { kind: "pending", message: `Asked response ${id} to stop. Its run has not stopped yet; it ends cancelled as soon as it does.` };
  }
  if (ENDED.has(before)) return { kind: "refused", message: `Response ${id} had already ended (${after.replace(/_/g, " ")}), so there is nothing to cancel. Nothing was changed.` };
  return { kind: "refused", message: `Response ${id} ended (${after.replace(/_/g, " ")}) before the cancel reached it. Nothing was changed.` };
}
