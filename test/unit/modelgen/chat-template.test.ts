// The chat template renders every turn type exactly as specified (ChatML with tools, reasoning and tool calls).
import { describe, expect, test } from "bun:test";
import { Template } from "@huggingface/jinja";
import { CHAT_TEMPLATE } from "../../../src/modelgen/chat-template.ts";

const t = new Template(CHAT_TEMPLATE);
const render = (ctx: Record<string, unknown>) => t.render({ add_generation_prompt: false, ...ctx });
const weather = {
  type: "function",
  function: { name: "get_weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const weatherJson = '{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';
const toolHelp = '\n</tools>\nTo call a tool reply with <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call><|im_end|>\n';

describe("chat template", () => {
  test("system, user and a generation prompt", () => {
    expect(render({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }], add_generation_prompt: true })).toBe(
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  test("no system turn without system text or tools", () => {
    expect(render({ messages: [{ role: "user", content: "Hi" }] })).toBe("<|im_start|>user\nHi<|im_end|>\n");
  });

  test("tools with a system message: one JSON definition per line after a blank line", () => {
    const other = { type: "function", function: { name: "noop", description: "", parameters: { type: "object", properties: {} } } };
    expect(render({ messages: [{ role: "system", content: "Sys" }, { role: "user", content: "Q" }], tools: [weather, other] })).toBe(
      `<|im_start|>system\nSys\n\n# Tools\n<tools>\n${weatherJson}\n{"type": "function", "function": {"name": "noop", "description": "", "parameters": {"type": "object", "properties": {}}}}${toolHelp}<|im_start|>user\nQ<|im_end|>\n`,
    );
  });

  test("tools without a system message still render the tools block", () => {
    expect(render({ messages: [{ role: "user", content: "Q" }], tools: [weather] })).toBe(
      `<|im_start|>system\n# Tools\n<tools>\n${weatherJson}${toolHelp}<|im_start|>user\nQ<|im_end|>\n`,
    );
  });

  test("assistant with reasoning and tool calls (string and object arguments), then tool results", () => {
    const messages = [
      { role: "user", content: "Weather in Paris and Oslo?" },
      {
        role: "assistant",
        content: "Checking.",
        reasoning_content: "Two cities, two calls.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: { city: "Oslo" } } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
      { role: "tool", tool_call_id: "call_2", content: "snow" },
      { role: "assistant", content: "Paris is sunny, Oslo has snow." },
    ];
    expect(render({ messages, add_generation_prompt: true })).toBe(
      "<|im_start|>user\nWeather in Paris and Oslo?<|im_end|>\n" +
        "<|im_start|>assistant\n<think>\nTwo cities, two calls.\n</think>\nChecking." +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>\n' +
        "<|im_start|>tool\n<tool_response>\nsunny\n</tool_response><|im_end|>\n" +
        "<|im_start|>tool\n<tool_response>\nsnow\n</tool_response><|im_end|>\n" +
        "<|im_start|>assistant\nParis is sunny, Oslo has snow.<|im_end|>\n" +
        "<|im_start|>assistant\n",
    );
  });

  test("null content with tool calls, and content given as text parts", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
    ];
    expect(render({ messages })).toBe(
      '<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>\n',
    );
  });
});
