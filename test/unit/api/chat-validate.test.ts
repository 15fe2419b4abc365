import { describe, expect, test } from "bun:test";
import type { ChatRequestBody } from "../../../src/api/chat/schema.ts";
import { checkToolPairing, chatRequest } from "../../../src/api/chat/validate.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";

const model = parseManifest(fakeManifest("chat-model-v1"), ["fp32"]);
const call = (id: string) => ({ id, type: "function" as const, function: { name: "f", arguments: "{}" } });
type Msgs = ChatRequestBody["messages"];

function paramOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (e) {
    return (e as { param: string | null }).param;
  }
  throw new Error("expected an error");
}

describe("chat tool-message pairing", () => {
  test("each call answered once, in the messages right after", () => {
    const ok: Msgs = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [call("a"), call("b")] },
      { role: "tool", tool_call_id: "b", content: "2" },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "assistant", content: "done" },
    ];
    expect(() => checkToolPairing(ok)).not.toThrow();
  });

  test("a missing answer, a wrong id, or an orphan tool message is a 400 naming the field", () => {
    expect(paramOf(() => checkToolPairing([{ role: "assistant", content: null, tool_calls: [call("a"), call("b")] }, { role: "tool", tool_call_id: "a", content: "" }]))).toBe(
      "messages.0.tool_calls",
    );
    expect(paramOf(() => checkToolPairing([{ role: "assistant", content: null, tool_calls: [call("a")] }, { role: "tool", tool_call_id: "z", content: "" }]))).toBe(
      "messages.1.tool_call_id",
    );
    expect(paramOf(() => checkToolPairing([{ role: "user", content: "x" }, { role: "tool", tool_call_id: "a", content: "" }]))).toBe("messages.1.tool_call_id");
  });
});

describe("chatRequest", () => {
  const base = { model: "chat-model-v1", messages: [{ role: "user", content: "hi" }] } as ChatRequestBody;

  test("defaults and role mapping", () => {
    const n = chatRequest(
      { ...base, messages: [{ role: "developer", content: [{ type: "text", text: "be brief" }] }, { role: "user", content: "hi" }], stop: "END", max_tokens: 5 },
      model,
    );
    expect(n.conversation).toEqual([{ role: "system", parts: [{ type: "text", text: "be brief" }] }, { role: "user", parts: [{ type: "text", text: "hi" }] }]);
    expect(n).toMatchObject({ n: 1, temperature: 1, topP: 1, seed: null, stop: ["END"], maxTokens: 5, toolChoice: "none", tools: null });
  });

  test("unsupported things are rejected clearly, never ignored", () => {
    expect(paramOf(() => chatRequest({ ...base, messages: [{ role: "wizard", content: "x" }] }, model))).toBe("messages.0.role");
    expect(paramOf(() => chatRequest({ ...base, messages: [{ role: "user", content: [{ type: "hologram", hologram: { url: "x" } } as { type: string }] }] }, model))).toBe("messages.0.content.0.type");
    expect(paramOf(() => chatRequest({ ...base, tool_choice: "required" }, model))).toBe("tool_choice");
    const tool = { type: "function" as const, function: { name: "f" } };
    expect(paramOf(() => chatRequest({ ...base, tools: [tool, tool] }, model))).toBe("tools.1.function.name");
    expect(paramOf(() => chatRequest({ ...base, tools: [tool], tool_choice: { type: "function", function: { name: "g" } } }, model))).toBe("tool_choice");
    const noTools = parseManifest(fakeManifest("plain-model-v1", { capabilities: { chat: true } }), ["fp32"]);
    expect(paramOf(() => chatRequest({ ...base, tools: [tool] }, noTools))).toBe("tools");
  });

  test("penalties, logit bias, top_k, min_p and repetition_penalty map onto the core's samplers; neutral values add nothing", () => {
    const n = chatRequest(
      { ...base, presence_penalty: 0.5, frequency_penalty: -0.25, logit_bias: { "7": 100, "12": -100 }, top_k: 3, min_p: 0.1, repetition_penalty: 1.3 },
      model,
    );
    expect(n.topK).toBe(3);
    expect(n.samplers).toEqual({ minP: 0.1, presencePenalty: 0.5, frequencyPenalty: -0.25, repetitionPenalty: 1.3, logitBias: [[7, 100], [12, -100]], biasParam: "logit_bias" });
    const neutral = chatRequest({ ...base, presence_penalty: 0, frequency_penalty: 0, top_k: -1, min_p: 0, logit_bias: {} }, model);
    expect(neutral.topK).toBeUndefined();
    expect(neutral.samplers).toEqual({ logitBias: [], biasParam: "logit_bias" });
  });

  test("tools and a named tool choice", () => {
    const tool = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } };
    const n = chatRequest({ ...base, tools: [tool], tool_choice: { type: "function", function: { name: "get_weather" } } }, model);
    expect(n.tools).toEqual([tool]);
    expect(n.toolChoice).toEqual({ name: "get_weather" });
  });
});
