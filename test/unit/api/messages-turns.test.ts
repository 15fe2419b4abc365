// Messages requests as Anthropic's API reads them: consecutive turns of one role combined, adaptive thinking with
// output_config.effort, and no thinking when it is disabled or left out.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { combineTurns } from "../../../src/api/messages/combine-turns.ts";
import type { MessagesRequestBody } from "../../../src/api/messages/schema.ts";
import { messagesThinking } from "../../../src/api/messages/thinking.ts";
import { messagesRequest } from "../../../src/api/messages/validate.ts";
import { createSealer } from "../../../src/crypto/sealing.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";

const model = parseManifest(fakeManifest("msg-model-v1"), ["fp32"]);
const plain = parseManifest(fakeManifest("plain-model-v1", { capabilities: { chat: true, tools: true, reasoning: false, vision: false, audio: false, image_generation: false } }), ["fp32"]);
const sealer = createSealer(randomBytes(32));
type Msgs = MessagesRequestBody["messages"];
const plan = (messages: Msgs, extra: Partial<MessagesRequestBody> = {}) => messagesRequest({ model: model.id, max_tokens: 64, messages, ...extra }, model, sealer).request;
const texts = (parts: { type: string; text?: string }[]) => parts.map((p) => (p.type === "text" ? p.text : p.type));

function errorOf(fn: () => unknown): { param: string | null; message: string } {
  try {
    fn();
  } catch (e) {
    return e as { param: string | null; message: string };
  }
  throw new Error("expected an error");
}

describe("consecutive turns of one role are one turn", () => {
  test("combineTurns concatenates the runs' blocks in order and keeps lone messages as they came", () => {
    const out = combineTurns([
      { role: "user", content: "hi" },
      { role: "user", content: [{ type: "text", text: "there" }] },
      { role: "assistant", content: "a" },
      { role: "user", content: "b" },
    ]);
    expect(out).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "there" }] },
      { role: "assistant", content: "a" },
      { role: "user", content: "b" },
    ]);
  });

  test("user, user (the Anthropic Python SDK's request) is one user turn, not a 400", () => {
    const conv = plan([{ role: "user", content: "hi" }, { role: "user", content: "there" }]).conversation;
    expect(conv.map((t) => t.role)).toEqual(["user"]);
    expect(texts(conv[0]!.parts as never)).toEqual(["hi", "there"]);
  });

  test("four assistant messages in a row (Claude Code's --continue) are one assistant turn before the next user turn", () => {
    const conv = plan([
      { role: "user", content: [{ type: "text", text: "say hi" }] },
      ...["one ", "two ", "three ", "four"].map((text) => ({ role: "assistant", content: [{ type: "text", text }] })),
      { role: "user", content: [{ type: "text", text: "now say bye" }] },
    ]).conversation;
    expect(conv.map((t) => t.role)).toEqual(["user", "assistant", "user"]);
    expect(texts(conv[1]!.parts as never)).toEqual(["one ", "two ", "three ", "four"]);
  });

  test("a final run of assistant messages is one prefill", () => {
    const r = plan([{ role: "user", content: "Count" }, { role: "assistant", content: "One, " }, { role: "assistant", content: [{ type: "text", text: "two, " }] }]);
    expect(r.assistantPrefill).toBe("One, two,");
    expect(r.conversation.map((t) => t.role)).toEqual(["user"]);
  });

  test("a tool_result may answer a tool_use of any message of the assistant turn before it", () => {
    const use = (id: string) => ({ role: "assistant", content: [{ type: "tool_use", id, name: "f", input: {} }] });
    const result = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "ok" });
    const conv = plan([{ role: "user", content: "go" }, use("t1"), use("t2"), { role: "user", content: [result("t1")] }, { role: "user", content: [result("t2")] }]).conversation;
    expect(conv.map((t) => t.role)).toEqual(["user", "assistant", "tool"]);
    // A tool_use two turns back is not answerable.
    expect(errorOf(() => plan([{ role: "user", content: "go" }, use("t1"), { role: "user", content: "x" }, { role: "assistant", content: "y" }, { role: "user", content: [result("t1")] }])).param).toBe("messages.4.content.0.tool_use_id");
  });

  test("what stays refused: a conversation that starts with an assistant turn, a role other than user or assistant, a non-text prefill", () => {
    expect(errorOf(() => plan([{ role: "assistant", content: "x" }])).param).toBe("messages.0.role");
    expect(errorOf(() => plan([{ role: "user", content: "x" }, { role: "system", content: "y" }])).param).toBe("messages.1.role");
    const prefill = errorOf(() => plan([{ role: "user", content: "x" }, { role: "assistant", content: "a" }, { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }]));
    expect(prefill.param).toBe("messages.2.content");
  });
});

describe("thinking", () => {
  const think = (thinking: MessagesRequestBody["thinking"], extra: Partial<MessagesRequestBody> = {}, m = model) => messagesThinking({ max_tokens: 64_000, thinking, ...extra }, m);

  test("adaptive: the block opens with output_config.effort's budget (high when left out), within half of max_tokens", () => {
    expect(think({ type: "adaptive" })).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 4096 });
    expect(think({ type: "adaptive" }, { output_config: { effort: "low" } })).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 256 });
    expect(think({ type: "adaptive" }, { output_config: { effort: "medium" } }).thinkingBudget).toBe(1024);
    expect(think({ type: "adaptive" }, { output_config: { effort: "max" } }).thinkingBudget).toBe(4096);
    expect(think({ type: "adaptive" }, { max_tokens: 256 }).thinkingBudget).toBe(128);
    // A model that does not reason just answers.
    expect(think({ type: "adaptive" }, {}, plain)).toEqual({});
  });

  test("disabled, and no thinking at all (Anthropic's default), turn the block off; effort alone does not turn it on", () => {
    expect(think({ type: "disabled" })).toEqual({ templateOptions: { enable_thinking: false } });
    expect(think(undefined)).toEqual({ templateOptions: { enable_thinking: false } });
    expect(think(undefined, { output_config: { effort: "high" } })).toEqual({ templateOptions: { enable_thinking: false } });
  });

  test("enabled keeps its rules: budget_tokens required and below max_tokens, on a model that reasons", () => {
    expect(think({ type: "enabled", budget_tokens: 2048 })).toEqual({ templateOptions: { enable_thinking: true }, thinkingBudget: 2048 });
    expect(errorOf(() => think({ type: "enabled" })).param).toBe("thinking.budget_tokens");
    expect(errorOf(() => think({ type: "enabled", budget_tokens: 2048 }, { max_tokens: 2048 })).param).toBe("thinking.budget_tokens");
    expect(errorOf(() => think({ type: "enabled", budget_tokens: 2048 }, {}, plain)).param).toBe("thinking");
  });
});
