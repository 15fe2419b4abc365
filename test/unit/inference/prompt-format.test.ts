// Per-model prompt formats: markers declared or derived, and template messages that Hugging Face-style templates render.
import { describe, expect, test } from "bun:test";
import { Template } from "@huggingface/jinja";
import { CHAT_TEMPLATE } from "../../../src/modelgen/chat-template.ts";
import type { Conversation } from "../../../src/inference/conversation.ts";
import { forcedPrefixFor, HERMES_TOOL_CALL, jsonInstructionFor, resolvePromptFormat, templateMessages, THINK } from "../../../src/inference/prompt-format.ts";

/** Written in the style of common Hub templates: tool-call arguments go through `tojson`, tool turns are grouped. */
const HF_STYLE = `{%- for message in messages %}
{%- if message.role == "assistant" %}
{{- "<|im_start|>assistant\\n" + message.content }}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- "\\n<tool_call>\\n{\\"name\\": \\"" + tool_call.name + "\\", \\"arguments\\": " }}{{- tool_call.arguments | tojson }}{{- "}\\n</tool_call>" }}
{%- endfor %}
{{- "<|im_end|>\\n" }}
{%- elif message.role == "tool" %}
{%- if loop.first or messages[loop.index0 - 1].role != "tool" %}{{- "<|im_start|>user" }}{%- endif %}
{{- "\\n<tool_response>\\n" + message.content + "\\n</tool_response>" }}
{%- if loop.last or messages[loop.index0 + 1].role != "tool" %}{{- "<|im_end|>\\n" }}{%- endif %}
{%- else %}
{{- "<|im_start|>" + message.role + "\\n" + message.content + "<|im_end|>\\n" }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- "<|im_start|>assistant\\n" }}{%- if enable_thinking is defined and not enable_thinking %}{{- "<think>\\n\\n</think>\\n\\n" }}{%- endif %}{%- endif %}`;

const conv: Conversation = [
  { role: "user", parts: [{ type: "text", text: "Weather?" }] },
  {
    role: "assistant",
    parts: [
      { type: "reasoning", text: "use the tool" },
      { type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris", days: [1, 2] } },
    ],
  },
  { role: "tool", parts: [{ type: "tool_result", callId: "call_1", parts: [{ type: "text", text: "18C" }], isError: false }] },
];

describe("templateMessages", () => {
  test("object arguments, reasoning_content, tool messages named after their call", () => {
    expect(templateMessages(conv)).toEqual([
      { role: "user", content: "Weather?" },
      {
        role: "assistant", content: "", reasoning_content: "use the tool",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: { city: "Paris", days: [1, 2] } } }],
      },
      { role: "tool", content: "18C", tool_call_id: "call_1", name: "get_weather" },
    ]);
  });

  test("a Hugging Face-style template applying tojson to the arguments renders the call as JSON", () => {
    const out = new Template(HF_STYLE).render({ messages: templateMessages(conv), add_generation_prompt: true, enable_thinking: false });
    expect(out).toBe(
      "<|im_start|>user\nWeather?<|im_end|>\n" +
        '<|im_start|>assistant\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}\n</tool_call><|im_end|>\n' +
        "<|im_start|>user\n<tool_response>\n18C\n</tool_response><|im_end|>\n" +
        "<|im_start|>assistant\n<think>\n\n</think>\n\n",
    );
  });

  test("kiln's own template renders the same call text and the reasoning", () => {
    const out = new Template(CHAT_TEMPLATE).render({ messages: templateMessages(conv), add_generation_prompt: true });
    expect(out).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}\n</tool_call>');
    expect(out).toContain("<think>\nuse the tool\n</think>\n");
  });

  test("an error result is marked in the tool message", () => {
    const failed: Conversation = [{ role: "tool", parts: [{ type: "tool_result", callId: "x", parts: [{ type: "text", text: "timeout" }], isError: true }] }];
    expect(templateMessages(failed)).toEqual([{ role: "tool", content: "Error: timeout", tool_call_id: "x" }]);
  });
});

describe("resolvePromptFormat", () => {
  const none = () => false;

  test("derived from the template and vocabulary: Hermes tool calls, think markers", () => {
    const f = resolvePromptFormat(undefined, HF_STYLE, (t) => t === "<think>" || t === "</think>");
    expect(f.toolCall).toEqual(HERMES_TOOL_CALL);
    expect(f.thinking).toEqual(THINK);
    expect(forcedPrefixFor(f, "get_weather")).toBe('<tool_call>\n{"name": "get_weather", "arguments": ');
    expect(jsonInstructionFor(f, null)).toBe("Respond with a single JSON object, and nothing else.");
    expect(jsonInstructionFor(f, { type: "object" })).toBe('Respond with a single JSON object matching this JSON schema: {"type":"object"}, and nothing else.');
  });

  test("a plain template has neither; declared fields win", () => {
    const plain = resolvePromptFormat(undefined, "{{ messages }}", none);
    expect(plain).toMatchObject({ toolCall: null, thinking: null, forcedToolPrefix: null });
    const declared = resolvePromptFormat(
      { tool_call: { open: "[TOOL]", close: "[/TOOL]" }, thinking: null, forced_tool_prefix: '[TOOL]{"name": {name}, "arguments": ', json_instruction: "JSON only{schema}." },
      HF_STYLE, () => true,
    );
    expect(declared.toolCall).toEqual({ open: "[TOOL]", close: "[/TOOL]" });
    expect(declared.thinking).toBeNull();
    expect(forcedPrefixFor(declared, "f")).toBe('[TOOL]{"name": "f", "arguments": ');
    expect(jsonInstructionFor(declared, null)).toBe("JSON only.");
  });

  test("bad declarations are named", () => {
    expect(() => resolvePromptFormat({ tool_call: { open: "" } }, "", none)).toThrow('"prompt_format.tool_call"');
    expect(() => resolvePromptFormat({ forced_tool_prefix: "no placeholder" }, "", none)).toThrow("{name}");
    expect(() => resolvePromptFormat([], "", none)).toThrow('"prompt_format" must be an object');
  });
});
