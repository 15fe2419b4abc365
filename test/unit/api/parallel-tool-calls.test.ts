// Each family's "at most one tool call" field becomes the core's singleToolCall: chat's and Responses'
// parallel_tool_calls false, Messages' tool_choice.disable_parallel_tool_use true; true or absent asks nothing.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { ChatRequestBody } from "../../../src/api/chat/schema.ts";
import { chatRequest } from "../../../src/api/chat/validate.ts";
import type { MessagesRequestBody } from "../../../src/api/messages/schema.ts";
import { messagesRequest } from "../../../src/api/messages/validate.ts";
import type { ResponsesRequestBody } from "../../../src/api/responses/schema.ts";
import { responsesRequest } from "../../../src/api/responses/validate.ts";
import { createSealer } from "../../../src/crypto/sealing.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";

const model = parseManifest(fakeManifest("tools-model-v1"), ["fp32"]);
const sealer = createSealer(randomBytes(32));

describe("parallel tool calls off, per family", () => {
  test("chat: parallel_tool_calls false", () => {
    const chat = (extra: Partial<ChatRequestBody>) =>
      chatRequest({ model: model.id, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f" } }], ...extra } as ChatRequestBody, model);
    expect(chat({ parallel_tool_calls: false }).singleToolCall).toBe(true);
    expect(chat({ parallel_tool_calls: true }).singleToolCall).toBeUndefined();
    expect(chat({ parallel_tool_calls: null }).singleToolCall).toBeUndefined();
    expect(chat({}).singleToolCall).toBeUndefined();
  });

  test("Responses: parallel_tool_calls false", () => {
    const sources = { sealer, search: null, history: null, storedReasoning: () => new Map<string, string>() };
    const responses = (extra: Partial<ResponsesRequestBody>) =>
      responsesRequest({ model: model.id, input: "hi", tools: [{ type: "function", name: "f" }], ...extra } as ResponsesRequestBody, model, sources).request;
    expect(responses({ parallel_tool_calls: false }).singleToolCall).toBe(true);
    expect(responses({ parallel_tool_calls: true }).singleToolCall).toBeUndefined();
    expect(responses({}).singleToolCall).toBeUndefined();
  });

  test("Messages: tool_choice.disable_parallel_tool_use true", () => {
    const messages = (extra: Partial<MessagesRequestBody>) =>
      messagesRequest({ model: model.id, max_tokens: 64, messages: [{ role: "user", content: "hi" }], tools: [{ name: "f", input_schema: { type: "object" } }], ...extra }, model, sealer).request;
    expect(messages({ tool_choice: { type: "auto", disable_parallel_tool_use: true } }).singleToolCall).toBe(true);
    expect(messages({ tool_choice: { type: "any", disable_parallel_tool_use: true } }).singleToolCall).toBe(true);
    expect(messages({ tool_choice: { type: "auto", disable_parallel_tool_use: false } }).singleToolCall).toBeUndefined();
    expect(messages({ tool_choice: { type: "auto" } }).singleToolCall).toBeUndefined();
    expect(messages({}).singleToolCall).toBeUndefined();
  });
});
