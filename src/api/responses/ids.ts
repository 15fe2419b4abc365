// The ids of the Responses format: the response, its output and input items, and function calls' call_id (the
// core's call id behind `call_`).

const hex32 = () => crypto.randomUUID().replace(/-/g, "");

export const newResponseId = () => `resp_${hex32()}`;
export const newMessageItemId = () => `msg_${hex32()}`;
export const newFunctionCallItemId = () => `fc_${hex32()}`;
export const newReasoningId = () => `rs_${hex32()}`;
export const newWebSearchCallId = () => `ws_${hex32()}`;
/** A stored function_call_output input item (OpenAI's input_items list gives every item an id). */
export const newFunctionCallOutputItemId = () => `fco_${hex32()}`;
export const callIdOf = (coreId: string) => `call_${coreId}`;
