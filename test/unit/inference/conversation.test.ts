// One conversation written in the three wire shapes (Chat Completions, Responses, Messages) maps to the same turns.
import { describe, expect, test } from "bun:test";
import { chatToConversation } from "../../../src/api/chat/to-conversation.ts";
import { messagesToConversation } from "../../../src/api/messages/to-conversation.ts";
import { responsesToConversation } from "../../../src/api/responses/to-conversation.ts";
import type { ChatRequestBody } from "../../../src/api/chat/schema.ts";
import { type Conversation, pushTurn } from "../../../src/inference/conversation.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

const SYSTEM = "You are terse.";
const ASK = "Weather in Paris and Rome?";
const THOUGHT = "Two cities: call the tool twice.";
const PRE = "Checking both.";
const ARGS_P = { city: "Paris", unit: "C" };
const ARGS_R = { city: "Rome", unit: "C" };

/** The turns all three shapes must give (replay credentials aside). */
const EXPECTED: Conversation = [
  { role: "system", parts: [{ type: "text", text: SYSTEM }] },
  { role: "user", parts: [{ type: "text", text: ASK }] },
  {
    role: "assistant",
    parts: [
      { type: "reasoning", text: THOUGHT },
      { type: "text", text: PRE },
      { type: "tool_call", id: "call_p", name: "get_weather", arguments: ARGS_P },
      { type: "tool_call", id: "call_r", name: "get_weather", arguments: ARGS_R },
    ],
  },
  {
    role: "tool",
    parts: [
      { type: "tool_result", callId: "call_p", parts: [{ type: "text", text: "18" }], isError: false },
      { type: "tool_result", callId: "call_r", parts: [{ type: "text", text: "24" }], isError: false },
    ],
  },
  { role: "assistant", parts: [{ type: "text", text: "Paris 18, Rome 24." }] },
  { role: "user", parts: [{ type: "text", text: "Thanks" }] },
];

const chat = [
  { role: "system", content: SYSTEM },
  { role: "user", content: ASK },
  {
    role: "assistant", content: PRE, reasoning_content: THOUGHT,
    tool_calls: [
      { id: "call_p", type: "function", function: { name: "get_weather", arguments: JSON.stringify(ARGS_P) } },
      { id: "call_r", type: "function", function: { name: "get_weather", arguments: '{ "city" : "Rome", "unit": "C" }' } },
    ],
  },
  { role: "tool", tool_call_id: "call_p", content: "18" },
  { role: "tool", tool_call_id: "call_r", content: [{ type: "text", text: "24" }] },
  { role: "assistant", content: "Paris 18, Rome 24." },
  { role: "user", content: [{ type: "text", text: "Thanks" }] },
] as unknown as ChatRequestBody["messages"];

const responses = [
  { role: "user", content: [{ type: "input_text", text: ASK }] },
  { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: THOUGHT }], encrypted_content: "sealed-blob" },
  { type: "message", role: "assistant", phase: "commentary", content: [{ type: "output_text", text: PRE }] },
  { type: "function_call", call_id: "call_p", name: "get_weather", arguments: JSON.stringify(ARGS_P) },
  { type: "function_call", call_id: "call_r", name: "get_weather", arguments: JSON.stringify(ARGS_R) },
  { type: "function_call_output", call_id: "call_p", output: "18" },
  { type: "function_call_output", call_id: "call_r", output: [{ type: "input_text", text: "24" }] },
  { role: "assistant", content: "Paris 18, Rome 24." },
  { role: "user", content: "Thanks" },
] as const;

const messages = [
  { role: "user", content: ASK },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: THOUGHT, signature: "sig-1" },
      { type: "text", text: PRE },
      { type: "tool_use", id: "call_p", name: "get_weather", input: ARGS_P },
      { type: "tool_use", id: "call_r", name: "get_weather", input: ARGS_R },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "call_p", content: "18" },
      { type: "tool_result", tool_use_id: "call_r", content: [{ type: "text", text: "24" }] },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "Paris 18, Rome 24." }] },
  { role: "user", content: [{ type: "text", text: "Thanks" }] },
] as const;

/** Drops the replay credentials only the Responses and Messages shapes carry. */
const withoutCredentials = (conv: Conversation): Conversation =>
  conv.map((t) => ({ ...t, parts: t.parts.map((p) => (p.type === "reasoning" ? { type: "reasoning", text: p.text } : p)) }));

/** The conversation without its reasoning parts. */
const withoutReasoning = (conv: Conversation): Conversation => conv.map((t) => ({ ...t, parts: t.parts.filter((p) => p.type !== "reasoning") }));

describe("one conversation, three wire shapes", () => {
  test("chat messages: reasoning_content is the client's word (chat has no seal), so it is left out", () => {
    expect(chatToConversation(chat)).toEqual(withoutReasoning(EXPECTED));
  });

  test("Responses instructions + items (assistant-side items of one output join one turn)", () => {
    const trusted = new Map([[responses[1] as never, THOUGHT]]);
    const conv = responsesToConversation(responses as never, SYSTEM, { reasoning: trusted });
    expect(withoutCredentials(conv)).toEqual(EXPECTED);
    expect(conv[2]!.parts[0]).toEqual({ type: "reasoning", text: THOUGHT, id: "rs_1", sealed: "sealed-blob" });
  });

  test("Responses: a reasoning item kiln does not vouch for adds nothing, whatever text it carries", () => {
    expect(responsesToConversation(responses as never, SYSTEM)).toEqual(withoutReasoning(EXPECTED));
  });

  test("Messages system + blocks (tool_result blocks become the tool turn)", () => {
    const conv = messagesToConversation([{ type: "text", text: SYSTEM }], messages as never);
    expect(withoutCredentials(conv)).toEqual(EXPECTED);
    expect(conv[2]!.parts[0]).toEqual({ type: "reasoning", text: THOUGHT, signature: "sig-1" });
  });
});

describe("mapping details", () => {
  test("chat: arguments that are not a JSON object are refused naming the param", () => {
    const bad = [{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "[1]" } }] }];
    const err = (() => {
      try {
        chatToConversation(bad as ChatRequestBody["messages"]);
      } catch (e) {
        return e as ApiError;
      }
    })();
    expect(err?.param).toBe("messages.1.tool_calls.0.function.arguments");
  });

  test("media parts: the same image, clip and file through the three shapes is one media part each, named by its item", () => {
    const png = "data:image/png;base64,AAAA";
    const chatConv = chatToConversation([{ role: "user", content: [
      { type: "text", text: "?" },
      { type: "image_url", image_url: { url: png, detail: "low" } },
      { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
      { type: "file", file: { file_id: "file-abc" } },
    ] }] as unknown as ChatRequestBody["messages"]);
    const respConv = responsesToConversation([{ role: "user", content: [
      { type: "input_text", text: "?" },
      { type: "input_image", image_url: png, detail: "low" },
      { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
      { type: "input_file", file_id: "file-abc" },
    ] }] as never, null);
    const msgConv = messagesToConversation(undefined, [{ role: "user", content: [
      { type: "text", text: "?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "image", source: { type: "file", file_id: "file-abc" } },
    ] }] as never);
    const image = { type: "media", declared: "image", source: { kind: "base64", mediaType: "image/png", data: "AAAA" } } as const;
    expect(chatConv[0]!.parts).toEqual([
      { type: "text", text: "?" },
      { ...image, at: "messages.0.content.1", detail: "low" },
      { type: "media", declared: "audio", source: { kind: "base64", mediaType: "wav", data: "UklG" }, at: "messages.0.content.2" },
      { type: "media", declared: "file", source: { kind: "file", fileId: "file-abc" }, at: "messages.0.content.3" },
    ]);
    expect(respConv[0]!.parts).toEqual([
      { type: "text", text: "?" },
      { ...image, at: "input.0.content.1", detail: "low" },
      { type: "media", declared: "audio", source: { kind: "base64", mediaType: "wav", data: "UklG" }, at: "input.0.content.2" },
      { type: "media", declared: "file", source: { kind: "file", fileId: "file-abc" }, at: "input.0.content.3" },
    ]);
    expect(msgConv[0]!.parts).toEqual([
      { type: "text", text: "?" },
      { ...image, at: "messages.0.content.1" },
      { type: "media", declared: "image", source: { kind: "file", fileId: "file-abc" }, at: "messages.0.content.2" },
    ]);
  });

  test("chat: media only in user messages, and each media part needs its payload", () => {
    const sys = [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }] }] as unknown as ChatRequestBody["messages"];
    expect(() => chatToConversation(sys)).toThrow("messages.0.content.0 is image_url, which a system message cannot carry");
    const empty = [{ role: "user", content: [{ type: "input_audio", input_audio: { format: "wav" } }] }] as unknown as ChatRequestBody["messages"];
    expect(() => chatToConversation(empty)).toThrow("messages.0.content.0.input_audio.data");
  });

  test("Responses: a string input is one user turn; developer messages are system turns; consecutive user turns stay apart", () => {
    expect(responsesToConversation("hi", null)).toEqual([{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
    const conv = responsesToConversation([{ role: "developer", content: "d" }, { role: "user", content: "a" }, { role: "user", content: "b" }], null);
    expect(conv.map((t) => t.role)).toEqual(["system", "user", "user"]);
  });

  test("Messages: errors on tool results, redacted thinking stays sealed, a user turn with results and text splits", () => {
    const conv = messagesToConversation(undefined, [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "redacted_thinking", data: "opaque" }, { type: "tool_use", id: "t1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "boom", is_error: true }, { type: "text", text: "and?" }] },
    ]);
    expect(conv.map((t) => t.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(conv[1]!.parts[0]).toEqual({ type: "reasoning", text: "", sealed: "opaque" });
    expect(conv[2]!.parts[0]).toMatchObject({ isError: true, callId: "t1" });
  });

  test("pushTurn merges only when asked", () => {
    const conv: Conversation = [];
    pushTurn(conv, { role: "user", parts: [{ type: "text", text: "a" }] });
    pushTurn(conv, { role: "user", parts: [{ type: "text", text: "b" }] });
    pushTurn(conv, { role: "tool", parts: [] }, true);
    pushTurn(conv, { role: "tool", parts: [{ type: "text", text: "c" }] }, true);
    expect(conv.map((t) => [t.role, t.parts.length])).toEqual([["user", 1], ["user", 1], ["tool", 1]]);
  });
});
