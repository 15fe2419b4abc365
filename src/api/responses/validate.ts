// A Responses request beyond its schema: input rules, tools, formats, replayed reasoning kiln trusts → the core request.
import type { Sealer } from "../../crypto/sealing.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import { checkStrictSchema } from "../../inference/constraint.ts";
import type { BuiltinTool } from "../../inference/builtin-tool.ts";
import { type Effort, thinkingFor } from "../../inference/effort.ts";
import type { AnswerFormat, CoreRequest } from "../../inference/request.ts";
import type { ToolChoice, ToolDef } from "../../inference/tool-def.ts";
import { withBuiltins } from "../../inference/tool-loop.ts";
import { WEB_SEARCH_FUNCTION } from "../../tools/web-search.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import { checkInputStructure } from "./input-rules.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import type { History } from "./chain.ts";
import { trustedReasoning } from "./reasoning.ts";
import { inputPath, type ResponsesInputItem, responsesToConversation } from "./to-conversation.ts";
import { forcesWebSearch, isWebSearchType, webSearchRequested } from "./web-search.ts";

const bad = (message: string, param: string | null) => ApiError.badRequest(message, param);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const ENCRYPTED_REASONING = "reasoning.encrypted_content";
export const TEXT_LOGPROBS = "message.output_text.logprobs";
// A web_search_call's action always carries its sources, so asking for them is accepted and changes nothing.
const INCLUDABLE = new Set([ENCRYPTED_REASONING, "web_search_call.action.sources", TEXT_LOGPROBS]);

export interface ResponsesPlan {
  request: CoreRequest;
  effort: Effort | null;
  includeEncrypted: boolean;
  /** The answer text's token log probabilities go into each output_text (include message.output_text.logprobs). */
  includeLogprobs: boolean;
  /** reasoning.summary was asked for: reasoning is returned as summary parts (kiln has no separate summarizer). */
  summary: boolean;
}

type RequestTool = ResponsesRequestBody["tools"] extends (infer T)[] | null | undefined ? T : never;

/** A function tool (`at` names it: tools.3, or tools.4.tools.1 inside a namespace) as the core's tool def. */
function functionTool(tool: RequestTool, at: string, seen: Set<string>): ToolDef {
  if (tool.type !== "function") throw bad(`${at}.type '${clip(String(tool.type))}' is not supported; use function, namespace or web_search.`, `${at}.type`);
  const name = tool.name ?? "";
  if (!TOOL_NAME.test(name)) throw bad(`${at}.name '${clip(name)}' must match ^[a-zA-Z0-9_-]{1,64}$.`, `${at}.name`);
  if (seen.has(name)) throw bad(`${at}.name '${name}' is declared twice.`, `${at}.name`);
  seen.add(name);
  if (tool.strict) checkStrictSchema(tool.parameters, `${at}.parameters`);
  return { type: "function", function: { name, ...(tool.description ? { description: tool.description } : {}), ...(tool.parameters ? { parameters: tool.parameters } : {}), ...(tool.strict != null ? { strict: tool.strict } : {}) } };
}

function tools(body: ResponsesRequestBody, model: ModelInfo): ToolDef[] | null {
  if (!body.tools?.length) return null;
  const seen = new Set<string>();
  const out: ToolDef[] = [];
  body.tools.forEach((tool, i) => {
    // The built-in tool is checked by webSearchRequested and added by the core.
    if (isWebSearchType(tool.type)) return;
    // A namespace groups function tools; the model sees and calls each under its own name.
    if (tool.type === "namespace") {
      if (!Array.isArray(tool.tools)) throw bad(`tools.${i} (a namespace) needs tools: an array of function tools.`, `tools.${i}.tools`);
      (tool.tools as RequestTool[]).forEach((inner, j) => out.push(functionTool(inner, `tools.${i}.tools.${j}`, seen)));
      return;
    }
    out.push(functionTool(tool, `tools.${i}`, seen));
  });
  if (!model.capabilities.tools) throw bad(`The model '${model.id}' does not support tools.`, "tools");
  return out.length ? out : null;
}

function toolChoice(body: ResponsesRequestBody, defs: ToolDef[] | null, web: boolean): ToolChoice {
  const tc = body.tool_choice;
  if (tc == null) return defs || web ? "auto" : "none";
  if (typeof tc === "string") {
    if (tc !== "none" && !body.tools?.length) throw bad(`tool_choice '${tc}' needs tools.`, "tool_choice");
    // Only a web_search the server cannot offer was declared: the model gets no tools.
    if (!defs && !web) return "none";
    // "required" with web_search alone forces the search (the core sees a named call).
    if (tc === "required" && !defs) return "auto";
    return tc === "required" ? "any" : tc;
  }
  if (isWebSearchType(tc.type)) {
    if (!web) throw bad(`tool_choice '${clip(tc.type)}' needs the web_search tool in tools.`, "tool_choice");
    return "auto";
  }
  if (tc.type !== "function" || !tc.name) throw bad('tool_choice must name a function: {"type":"function","name":…}.', "tool_choice");
  if (!defs?.some((d) => d.function.name === tc.name)) throw bad(`tool_choice names '${clip(tc.name)}', which is not among tools.`, "tool_choice");
  return { name: tc.name };
}

function answerFormat(body: ResponsesRequestBody): AnswerFormat {
  const f = body.text?.format;
  if (!f || f.type === "text") return { kind: "text" };
  if (f.type === "json_object") return { kind: "json" };
  if (f.type === "json_schema") {
    if (!f.name) throw bad("text.format of type json_schema needs a name.", "text.format.name");
    if (!f.schema) throw bad("text.format of type json_schema needs a schema.", "text.format.schema");
    if (f.strict) checkStrictSchema(f.schema, "text.format.schema");
    return { kind: "json_schema", name: f.name, schema: f.schema, ...(f.strict != null ? { strict: f.strict } : {}) };
  }
  throw bad(`text.format.type '${clip(f.type)}' is not supported; use text, json_object or json_schema.`, "text.format.type");
}

/** Each `include` value is one kiln can honour (the create request's and a retrieve's alike). */
export function checkInclude(include: readonly string[]): void {
  for (const inc of include) if (!INCLUDABLE.has(inc)) throw bad(`include '${clip(inc)}' is not supported; kiln can include ${[...INCLUDABLE].join(", ")}.`, "include");
}

/** The request options that do not depend on the model (checked before any work, a background job's included). */
export function checkOptions(body: ResponsesRequestBody): void {
  if (body.background && body.store === false) throw bad("background: true needs store: true (a background response is kept so it can be polled).", "background");
  if (body.truncation === "auto") throw bad('truncation "auto" is not supported: kiln never drops input; send "disabled" or leave it out.', "truncation");
  checkInclude(body.include ?? []);
  if (body.top_logprobs != null && (body.top_logprobs < 0 || body.top_logprobs > 20)) throw bad("top_logprobs must be a whole number from 0 to 20.", "top_logprobs");
}

/** What a request is planned against besides its body (src/api/responses/plan.ts gathers them from the store). */
export interface PlanSources {
  sealer: Sealer;
  /** The server's web_search tool (null: no backend configured). */
  search: BuiltinTool | null;
  /** The previous_response_id chain's items, which come before the input. */
  history: History | null;
  /** The text of each of these reasoning items kiln stored for the caller's team and the request's model; others are absent. */
  storedReasoning(ids: string[]): Map<string, string>;
}

export function responsesRequest(body: ResponsesRequestBody, model: ModelInfo, src: PlanSources): ResponsesPlan {
  const { history } = src;
  checkOptions(body);
  checkInputStructure(body.input, { earlierCalls: history?.callIds });
  const effort = (body.reasoning?.effort ?? body.reasoning_effort ?? null) as Effort | null;
  if (effort && effort !== "none" && !model.capabilities.reasoning) throw bad(`The model '${model.id}' does not reason; leave reasoning.effort out.`, "reasoning.effort");
  const own = body.input as string | ResponsesInputItem[];
  const items = history ? [...history.items, ...(typeof own === "string" ? [{ role: "user" as const, content: own }] : own)] : own;
  // Errors name items as the client sent them: the chain's items come first but are not its input.N.
  const path = inputPath(history?.items.length ?? 0);
  const reasoning = typeof items === "string" ? new Map() : trustedReasoning(items, { sealer: src.sealer, model: model.id, stored: src.storedReasoning }, path);
  const web = webSearchRequested(body, src.search);
  const defs = tools(body, model);
  const logprobs = (body.include ?? []).includes(TEXT_LOGPROBS);
  const request: CoreRequest = {
    conversation: responsesToConversation(items, body.instructions ?? null, { reasoning, path }),
    tools: defs,
    toolChoice: toolChoice(body, defs, web),
    ...(body.parallel_tool_calls === false ? { singleToolCall: true } : {}),
    answerFormat: answerFormat(body),
    n: 1,
    maxTokens: body.max_output_tokens ?? null,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: body.seed ?? null,
    stop: [],
    ignoreEos: false,
    ...(logprobs ? { logprobs: body.top_logprobs ?? 0 } : {}),
    ...thinkingFor(model.capabilities.reasoning, effort),
  };
  return {
    request: web && src.search ? withBuiltins(request, [src.search], forcesWebSearch(body, defs?.length ?? 0) ? WEB_SEARCH_FUNCTION : null) : request,
    effort,
    includeEncrypted: (body.include ?? []).includes(ENCRYPTED_REASONING),
    includeLogprobs: logprobs,
    summary: body.reasoning?.summary != null,
  };
}
