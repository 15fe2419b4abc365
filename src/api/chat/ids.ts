// The ids Chat Completions answers carry: the completion's and its tool calls' (the core's call id behind `call_`).

const hex32 = () => crypto.randomUUID().replace(/-/g, "");

export const newChatCompletionId = () => `chatcmpl-${hex32()}`;
/** Clients are used to 24 hex characters after `call_`, which is what the core's call id is. */
export const chatCallId = (coreId: string) => `call_${coreId}`;
