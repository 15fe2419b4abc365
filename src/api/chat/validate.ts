// Checks a chat request beyond its schema (roles, tool-call pairing, tools) and normalizes it for the core.
import { ApiError, clip } from "../../errors/api-error.ts";
import { checkStrictSchema } from "../../inference/constraint.ts";
import { type Effort, thinkingFor } from "../../inference/effort.ts";
import type { AnswerFormat, CoreRequest } from "../../inference/request.ts";
import type { ToolChoice, ToolDef } from "../../inference/tool-def.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import { samplerFields } from "../sampler-fields.ts";
import type { ChatRequestBody } from "./schema.ts";
import { chatToConversation } from "./to-conversation.ts";

const bad = (message: string, param: string) => ApiError.badRequest(message, param);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The spec's rule: each assistant message with tool_calls is followed by one tool message per call, matching ids. */
export function checkToolPairing(messages: ChatRequestBody["messages"]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "tool") {
      throw bad(
        `messages.${i} has role 'tool' but does not answer a tool call of the assistant message before it.`,
        `messages.${i}.tool_call_id`,
      );
    }
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const expected = new Set(m.tool_calls.map((c) => c.id));
    if (expected.size !== m.tool_calls.length) throw bad(`messages.${i}.tool_calls has duplicate ids.`, `messages.${i}.tool_calls`);
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role === "tool"; j++) {
      const id = messages[j]!.tool_call_id;
      if (!id) throw bad(`messages.${j} (role 'tool') needs a tool_call_id.`, `messages.${j}.tool_call_id`);
      if (!expected.delete(id)) {
        throw bad(`messages.${j}.tool_call_id '${clip(id)}' does not match a remaining tool call of messages.${i}.`, `messages.${j}.tool_call_id`);
      }
    }
    if (expected.size) {
      throw bad(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. ` +
          `messages.${i} has no response for: ${clip([...expected].join(", "), 200)}.`,
        `messages.${i}.tool_calls`,
      );
    }
    i = j - 1;
  }
}

/** A validated chat request as the core's neutral request. */
export function chatRequest(body: ChatRequestBody, model: ModelInfo): CoreRequest {
  const caps = model.capabilities;
  checkToolPairing(body.messages);
  const conversation = chatToConversation(body.messages);

  const tools = body.tools?.length ? (body.tools as ToolDef[]) : null;
  if (tools) {
    if (!caps.tools) throw bad(`The model '${model.id}' does not support tools.`, "tools");
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      const name = tool.function.name;
      if (!TOOL_NAME.test(name)) throw bad(`tools.${i}.function.name '${clip(name)}' must match ^[a-zA-Z0-9_-]{1,64}$.`, `tools.${i}.function.name`);
      if (seen.has(name)) throw bad(`tools.${i}.function.name '${name}' is declared twice.`, `tools.${i}.function.name`);
      seen.add(name);
      if (tool.function.strict) checkStrictSchema(tool.function.parameters, `tools.${i}.function.parameters`);
    });
  }
  let toolChoice: ToolChoice = tools ? "auto" : "none";
  const tc = body.tool_choice;
  if (tc !== undefined && tc !== null) {
    if (typeof tc === "object") {
      if (!tools?.some((t) => t.function.name === tc.function.name)) {
        throw bad(`tool_choice names '${clip(tc.function.name)}', which is not among tools.`, "tool_choice");
      }
      toolChoice = { name: tc.function.name };
    } else {
      if (tc !== "none" && !tools) throw bad(`tool_choice '${clip(tc)}' needs tools.`, "tool_choice");
      toolChoice = tc === "required" ? "any" : tc;
    }
  }

  const sampling = samplerFields(body);
  if (body.top_logprobs != null && (body.top_logprobs < 0 || body.top_logprobs > 20)) throw bad("top_logprobs must be a whole number from 0 to 20.", "top_logprobs");
  if (body.top_logprobs != null && !body.logprobs) throw bad("top_logprobs needs logprobs set to true.", "top_logprobs");
  if (body.max_tokens != null && body.max_completion_tokens != null && body.max_tokens !== body.max_completion_tokens) {
    throw bad("max_tokens and max_completion_tokens disagree; send one of them.", "max_tokens");
  }

  const rf = body.response_format;
  const answerFormat: AnswerFormat =
    !rf || rf.type === "text" ? { kind: "text" }
    : rf.type === "json_object" ? { kind: "json" }
    : { kind: "json_schema", name: rf.json_schema.name, schema: rf.json_schema.schema ?? null, ...(rf.json_schema.strict != null ? { strict: rf.json_schema.strict } : {}) };
  if (answerFormat.kind === "json_schema" && answerFormat.strict) checkStrictSchema(answerFormat.schema, "response_format.json_schema.schema");
  if (answerFormat.kind !== "text" && toolChoice !== "none" && typeof toolChoice === "object") {
    throw bad("response_format and a forced tool_choice cannot be combined.", "response_format");
  }
  const effort = (body.reasoning_effort ?? null) as Effort | null;
  if (effort && effort !== "none" && !caps.reasoning) throw bad(`The model '${model.id}' does not reason; leave reasoning_effort out.`, "reasoning_effort");

  return {
    conversation,
    tools,
    toolChoice,
    ...(body.parallel_tool_calls === false ? { singleToolCall: true } : {}),
    answerFormat,
    n: body.n ?? 1,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: body.seed ?? null,
    ...sampling,
    stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
    ignoreEos: body.ignore_eos ?? false,
    ...(body.logprobs ? { logprobs: body.top_logprobs ?? 0 } : {}),
    ...thinkingFor(caps.reasoning, effort),
  };
}
