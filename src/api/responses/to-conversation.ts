// Responses input (a string, or message / reasoning / function_call / function_call_output items) → the neutral conversation.
import { ApiError } from "../../errors/api-error.ts";
import { type Conversation, type MediaPart, parseArguments, pushTurn, type TextPart } from "../../inference/conversation.ts";
import { sourceFromFileData, sourceFromUrl } from "../../media/data-url.ts";

/** The input item shapes this mapping reads (the route's schema validates them first). */
export type ResponsesContentPart =
  | { type: "input_text" | "output_text"; text: string }
  | { type: "refusal"; refusal: string }
  | { type: "input_image"; image_url?: string; file_id?: string; detail?: MediaPart["detail"] }
  | { type: "input_file"; file_id?: string; file_data?: string; file_url?: string; filename?: string }
  | { type: "input_audio"; input_audio?: { data?: string; format?: string } };

export type ResponsesInputItem =
  | { type?: "message"; role: "user" | "system" | "developer" | "assistant"; content: string | ResponsesContentPart[]; phase?: string }
  | { type: "reasoning"; id?: string; summary?: { type: "summary_text"; text: string }[]; content?: { type: "reasoning_text"; text: string }[] | null; encrypted_content?: string | null }
  | { type: "function_call"; call_id: string; name: string; arguments: string; id?: string }
  | { type: "function_call_output"; call_id: string; output: string | ResponsesContentPart[] }
  | { type: "web_search_call"; id?: string };

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

/** An input_image, input_file or input_audio part as a core media part; 400 naming the field it lacks. */
function mediaPart(p: Exclude<ResponsesContentPart, { type: "input_text" | "output_text" | "refusal" }>, at: string): MediaPart {
  const need = (field: string, what: string) => ApiError.badRequest(`${at} needs ${what}.`, `${at}.${field}`);
  switch (p.type) {
    case "input_image": {
      const detail = p.detail ? { detail: p.detail } : {};
      if (p.file_id) return { type: "media", declared: "image", source: { kind: "file", fileId: p.file_id }, at, ...detail };
      if (p.image_url) return { type: "media", declared: "image", source: sourceFromUrl(p.image_url), at, ...detail };
      throw need("image_url", "image_url or file_id");
    }
    case "input_file": {
      const name = p.filename ? { filename: p.filename } : {};
      if (p.file_id) return { type: "media", declared: "file", source: { kind: "file", fileId: p.file_id }, at, ...name };
      if (p.file_data) return { type: "media", declared: "file", source: sourceFromFileData(p.file_data), at, ...name };
      if (p.file_url) return { type: "media", declared: "file", source: sourceFromUrl(p.file_url), at, ...name };
      throw need("file_id", "file_id, file_data or file_url");
    }
    case "input_audio":
      if (!p.input_audio?.data) throw need("input_audio.data", "input_audio.data (base64 audio)");
      return { type: "media", declared: "audio", source: { kind: "base64", mediaType: p.input_audio.format ?? null, data: p.input_audio.data }, at };
  }
}

/** A message's content; `at` names it (`input.3.content`, or the chain item's place) for media errors. */
function parts(content: string | ResponsesContentPart[], at: string): (TextPart | MediaPart)[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return content.map((p, j): TextPart | MediaPart => {
    if (p.type === "refusal") return { type: "text", text: p.refusal };
    if (p.type === "input_image" || p.type === "input_file" || p.type === "input_audio") return mediaPart(p, `${at}.${j}`);
    return { type: "text", text: p.text };
  });
}

/** `instructions` first, then the input; a string input is one user message. */
export function responsesToConversation(input: string | readonly ResponsesInputItem[], instructions: string | null, o: ToConversationOptions = { reasoning: new Map() }): Conversation {
  const path = o.path ?? inputPath(0);
  const where = (i: number) => path(i) ?? `previous_response_id item ${i}`;
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
      case "web_search_call":
        return;
      case "function_call_output":
        return pushTurn(conv, { role: "tool", parts: [{ type: "tool_result", callId: item.call_id, parts: parts(item.output, `${where(i)}.output`), isError: false }] }, true);
      default: {
        const role = item.role === "developer" ? "system" : item.role;
        // An assistant message joins the reasoning and calls of the same output; user and system turns stay apart.
        return pushTurn(conv, { role, parts: parts(item.content, `${where(i)}.content`) }, role === "assistant");
      }
    }
  });
  return conv;
}
