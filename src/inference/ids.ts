// Every id kiln mints, with the prefixes the wire formats use; one place, so the formats stay consistent.

/** 32 lowercase hex characters from a CSPRNG (a UUID without its dashes). */
const hex32 = () => crypto.randomUUID().replace(/-/g, "");

export const newRequestId = () => `req_${hex32()}`;
export const newChatCompletionId = () => `chatcmpl-${hex32()}`;
/** Tool call ids: 24 hex characters after `call_`, as Chat Completions clients are used to. */
export const newCallId = () => `call_${hex32().slice(0, 24)}`;
export const newResponseId = () => `resp_${hex32()}`;
/** Output item ids of the Responses format: message, function call, reasoning, web search call. */
export const newMessageItemId = () => `msg_${hex32()}`;
export const newFunctionCallItemId = () => `fc_${hex32()}`;
export const newReasoningId = () => `rs_${hex32()}`;
export const newWebSearchCallId = () => `ws_${hex32()}`;
/** A stored function_call_output input item (OpenAI's input_items list gives every item an id). */
export const newFunctionCallOutputItemId = () => `fco_${hex32()}`;
/** Messages format ids: the message itself and its tool_use blocks (a core call id keeps its hex part). */
export const newAnthropicMessageId = () => `msg_${hex32()}`;
export const toolUseId = (callId: string) => `toolu_${callId.replace(/^call_/, "")}`;
