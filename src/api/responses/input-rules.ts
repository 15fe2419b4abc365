// The Responses input-structure rules (spec, POST /responses, rules 1–5) and the item shapes, as one pure check.
// Each violation is a 400 naming the param the spec names.
import { ApiError, clip } from "../../errors/api-error.ts";
import type { ResponsesRequestBody } from "./schema.ts";

type Item = Exclude<ResponsesRequestBody["input"], string>[number];

const bad = (message: string, param: string | null) => ApiError.badRequest(message, param);
const ROLES = new Set(["user", "assistant", "system", "developer"]);
const PART_TYPES: Record<string, Set<string>> = {
  user: new Set(["input_text", "input_image", "input_file", "input_audio"]),
  system: new Set(["input_text"]),
  developer: new Set(["input_text"]),
  assistant: new Set(["output_text", "input_text", "refusal"]),
};

/** What a function_call_output's output may hold besides a string: text and media, as a user message. */
const OUTPUT_PART_TYPES = new Set(["input_text", "input_image", "input_file", "input_audio"]);

type Parts = Extract<Item["content"], unknown[]>;

/** Each part's type is one `where` may carry, and text parts have their text. */
function checkParts(parts: Parts, allowed: Set<string>, at: string, where: string): void {
  parts.forEach((p, j) => {
    if (!allowed.has(p.type)) throw bad(`${at}.${j} has type '${clip(String(p.type))}', which ${where} cannot carry.`, `${at}.${j}.type`);
    if ((p.type === "input_text" || p.type === "output_text") && typeof p.text !== "string") throw bad(`${at}.${j} needs text.`, `${at}.${j}.text`);
  });
}

function kind(item: Item): string {
  return item.type ?? "message";
}

function checkItemShape(item: Item, i: number): void {
  const at = `input.${i}`;
  switch (kind(item)) {
    case "message": {
      if (!item.role || !ROLES.has(item.role)) {
        throw bad(`${at}.role '${clip(String(item.role ?? ""))}' is not supported; use user, assistant, system or developer.`, `${at}.role`);
      }
      if (item.content == null) throw bad(`${at} (a message) needs content.`, `${at}.content`);
      if (Array.isArray(item.content)) checkParts(item.content, PART_TYPES[item.role!]!, `${at}.content`, `a ${item.role} message`);
      if (item.phase != null && item.phase !== "commentary" && item.phase !== "final_answer") {
        throw bad(`${at}.phase must be "commentary" or "final_answer".`, `${at}.phase`);
      }
      return;
    }
    case "function_call":
      if (!item.call_id) throw bad(`${at} (a function_call) needs a call_id.`, `${at}.call_id`);
      if (!item.name) throw bad(`${at} (a function_call) needs a name.`, `${at}.name`);
      if (typeof item.arguments !== "string") throw bad(`${at}.arguments must be a JSON string.`, `${at}.arguments`);
      return;
    case "function_call_output":
      if (!item.call_id) throw bad(`${at} (a function_call_output) needs a call_id.`, "call_id");
      if (item.output === undefined) throw bad(`${at} (a function_call_output) needs an output.`, `${at}.output`);
      if (Array.isArray(item.output)) checkParts(item.output, OUTPUT_PART_TYPES, `${at}.output`, "a function_call_output");
      return;
    case "reasoning":
    // kiln's own web_search_call output items replay as they are; they add nothing to the prompt (the answer after one carries what it found).
    case "web_search_call":
      return;
    default:
      throw bad(`${at}.type '${clip(String(item.type))}' is not supported; use message, function_call, function_call_output, reasoning or web_search_call.`, `${at}.type`);
  }
}

/** For each position, the first item after it that is not reasoning (one backward pass, so the rules stay linear). */
function followingItems(input: Item[]): (Item | undefined)[] {
  const out = new Array<Item | undefined>(input.length);
  let next: Item | undefined;
  for (let i = input.length - 1; i >= 0; i--) {
    out[i] = next;
    if (kind(input[i]!) !== "reasoning") next = input[i];
  }
  return out;
}

/**
 * Rules 1–5 and the item shapes, in time linear in the input. `earlierCalls` are the call ids of the previous_response_id chain: with it, a
 * function_call_output may answer a call made in an earlier response, so rule 1 is relaxed to the whole chain.
 */
export function checkInputStructure(input: ResponsesRequestBody["input"], opts: { earlierCalls?: ReadonlySet<string> } = {}): void {
  if (typeof input === "string") {
    if (!input) throw bad("input must not be empty.", "input");
    return;
  }
  if (!input.length) throw bad("input must not be empty.", "input");
  input.forEach(checkItemShape);

  // Rule 1: every function_call_output answers a function_call of this request.
  const calls = new Set(input.filter((it) => kind(it) === "function_call").map((it) => it.call_id));
  input.forEach((it, i) => {
    if (kind(it) === "function_call_output" && !calls.has(it.call_id) && !opts.earlierCalls?.has(it.call_id!)) {
      throw bad(`No tool call found for function call output with call_id ${clip(String(it.call_id))} (input.${i}).`, "call_id");
    }
  });

  // Item ids name items (input_items pages by them): a repeated one is refused.
  const ids = new Set<string>();
  input.forEach((it, i) => {
    if (kind(it) === "reasoning" || it.id == null) return;
    if (ids.has(it.id)) throw bad(`Duplicate item id ${clip(it.id)} (input.${i}); each input item's id must be unique.`, "input");
    ids.add(it.id);
  });

  const following = followingItems(input);
  const seen = new Set<string>();
  input.forEach((it, i) => {
    if (kind(it) === "reasoning") {
      // Rule 5: an id passed back is unchanged and rs_-prefixed; it may be left out when encrypted_content is there.
      if (it.id == null) {
        if (!it.encrypted_content) throw bad(`input.${i} (a reasoning item) needs its id or its encrypted_content.`, `input.${i}.id`);
      } else {
        if (!/^rs_[A-Za-z0-9_-]+$/.test(it.id)) throw bad("Invalid reasoning ID format", `input.${i}.id`);
        // Rule 4: reasoning ids do not repeat.
        if (seen.has(it.id)) throw bad(`Duplicate reasoning item id ${clip(it.id)} (input.${i}).`, "input");
        seen.add(it.id);
      }
      // Rule 2: the reasoning is followed by an assistant message or a function_call before any new turn.
      const next = following[i];
      const ok = next && (kind(next) === "function_call" || kind(next) === "web_search_call" || (kind(next) === "message" && next.role === "assistant"));
      if (!ok) {
        const name = it.id ? `${clip(it.id)} (input.${i})` : `input.${i}`;
        throw bad(`Item ${name} of type 'reasoning' was provided without its required following item (an assistant message or a function_call).`, "input");
      }
    }
    // Rule 3: assistant text right before a function_call is commentary.
    if (kind(it) === "message" && it.role === "assistant" && it.phase !== "commentary") {
      const next = input[i + 1];
      if (next && kind(next) === "function_call") {
        throw bad(
          `input.${i} is an assistant message followed by a function_call (input.${i + 1}); under Responses input rule 3 it needs the field phase: "commentary" (set "phase": "commentary" on input.${i}).`,
          `input.${i}.phase`,
        );
      }
    }
  });
}
