// The ids Messages answers carry: the message's and its tool_use blocks' (the core's call id behind `toolu_`).

export const newMessageId = () => `msg_${crypto.randomUUID().replace(/-/g, "")}`;
export const toolUseId = (coreId: string) => `toolu_${coreId}`;
