// Responses input (a string, or message / reasoning / function_call / function_call_output items) → the neutral conversation.
import { ApiError } from "../../errors/api-error.ts";
import { type Conversation, type ImagePart, parseArguments, pushTurn, type TextPart } from "../../inference/conversation.ts";

/** The input item shapes this mapping reads (the route's schema validates them first). */
export type ResponsesContentPart =
  | { type: "input_text" | "output_text"; text: string }
  | { type: "refusal"; refusal: string }
  | { type: "input_image"; image_url?: string; file_id?: string; detail?: ImagePart["detail"] };

export type ResponsesInputItem =
  | { type?: "message"; role: "user" | "system" | "developer" | "assistant"; content: string | ResponsesContentPart[]; phase?: string }
  | { type: "reasoning"; id?: string; summary?: { type: "summary_text"; text: string }[]; content?: { type: "reasoning_text"; text: string }[]; encrypted_content?: string | null }
  | { type: "function_call"; call_id: string; name: string; arguments: string; id?: string }
  | { type: "function_call_output"; call_id: string; output: string | ResponsesContentPart[] };

/**
 * Names item i of the items a request is planned from (the previous_response_id chain's first, then the input) as
 * the client knows it: `input.N` of its own request, or null for an item of the stored chain.
 */
export type InputPath = (i: number) => string | null;

export const inputPath = (chainLength: number): InputPath => (i) => (i >= chainLength ? `input.${i - chainLength}` : null);

/** A 400 about `field` of item i: param input.N.field, or previous_response_id for an item of the stored chain. */
export function itemError(path: InputPath, i: number, field: string, problem: string): ApiError {
  const at = path(i);
  return at
    ? ApiError.badRequest(`${at}.${field} ${problem}`, `${at}.${field}`)
    : ApiError.badRequest(`An item of the previous_response_id chain: its ${field} ${problem}`, "previous_response_id");
}

export interface ToConversationOptions {
  /** The replayed reasoning items kiln trusts, with their text (src/api/responses/reasoning.ts); any other adds nothing. */
  reasoning: ReadonlyMap<ResponsesInputItem, string>;
  path?: InputPath;
}

function parts(content: string | ResponsesContentPart[]): (TextPart | ImagePart)[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.map((p): TextPart | ImagePart => {
    if (p.type === "refusal") return { type: "text", text: p.refusal };
    if (p.type === "input_image") {
      const source: ImagePart["source"] = p.file_id ? { kind: "file", fileId: p.file_id } : { kind: "url", url: p.image_url ?? "" };
      return { type: "image", source, ...(p.detail ? { detail: p.detail } : {}) };
    }
    return { type: "text", text: p.text };
  });
}

/** `instructions` first, then the input; a string input is one user message. */
export function responsesToConversation(input: string | readonly ResponsesInputItem[], instructions: string | null, o: ToConversationOptions = { reasoning: new Map() }): Conversation {
  const path = o.path ?? inputPath(0);
  const conv: Conversation = [];
  if (instructions) pushTurn(conv, { role: "system", parts: [{ type: "text", text: instructions }] });
  if (typeof input === "string") {
    pushTurn(conv, { role: "user", parts: [{ type: "text", text: input }] });
    return conv;
  }
  input.forEach((item, i) => {
    switch (item.type) {
      case "reasoning": {
        const text = o.reasoning.get(item);
        if (text === undefined) return;
        return pushTurn(conv, {
          role: "assistant",
          parts: [{ type: "reasoning", text, ...(item.id ? { id: item.id } : {}), ...(item.encrypted_content ? { sealed: item.encrypted_content } : {}) }],
        }, true);
      }
      case "function_call": {
        const args = parseArguments(item.arguments);
        if (!args) throw itemError(path, i, "arguments", "must be a JSON object.");
        return pushTurn(conv, { role: "assistant", parts: [{ type: "tool_call", id: item.call_id, name: item.name, arguments: args }] }, true);
      }
      case "function_call_output":
        return pushTurn(conv, { role: "tool", parts: [{ type: "tool_result", callId: item.call_id, parts: parts(item.output), isError: false }] }, true);
      default: {
        const role = item.role === "developer" ? "system" : item.role;
        // An assistant message joins the reasoning and calls of the same output; user and system turns stay apart.
        return pushTurn(conv, { role, parts: parts(item.content) }, role === "assistant");
      }
    }
  });
  return conv;
}
