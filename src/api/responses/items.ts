// Input items as kiln stores them, and a stored response's output turned back into input: the pure half of
// storage and of previous_response_id.
import { newFunctionCallItemId, newFunctionCallOutputItemId, newMessageItemId, newReasoningId } from "./ids.ts";
import type { StoredItem } from "../../db/responses-repo.ts";
import type { ResponsesRequestBody } from "./schema.ts";

type Json = Record<string, unknown>;

function mintId(item: Json): string {
  switch (item.type) {
    case "function_call":
      return newFunctionCallItemId();
    case "function_call_output":
      return newFunctionCallOutputItemId();
    case "reasoning":
      return newReasoningId();
    default:
      return newMessageItemId();
  }
}

/**
 * The request's input as stored items: a string becomes one user message, every item gets its `type` spelled out
 * and an id (the client's, or a new one of the item's kind). A reasoning item keeps an absent id absent, because
 * rule 5 ties reasoning ids to the response that made them; its stored row still has an id to page by.
 */
export function storedInput(input: ResponsesRequestBody["input"]): StoredItem[] {
  if (typeof input === "string") {
    const itemId = newMessageItemId();
    return [{ itemId, item: { id: itemId, type: "message", role: "user", content: [{ type: "input_text", text: input }] } }];
  }
  return input.map((raw) => {
    const item: Json = { ...(raw as Json), type: raw.type ?? "message" };
    if (item.type === "message" && typeof item.content === "string") item.content = [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content }];
    const given = typeof item.id === "string" && item.id ? item.id : null;
    const itemId = given ?? mintId(item);
    if (!given && item.type !== "reasoning") item.id = itemId;
    return { itemId, item };
  });
}

/**
 * A stored response's output as the input items a client would send back to continue it: messages, function calls
 * and reasoning as they were (reasoning in plain text; a seal is dropped, as the server holds the text), and the
 * built-in tool's web_search_call items left out, since they are not input (the text after them carries what they found).
 */
export function outputAsInput(output: Json[]): Json[] {
  const out: Json[] = [];
  for (const item of output) {
    if (item.type === "web_search_call") continue;
    if (item.type === "reasoning") {
      const { encrypted_content: _sealed, ...plain } = item;
      out.push(plain);
    } else out.push(item);
  }
  return out;
}
