// The format-neutral generation core: prompt → context check → scheduler sequences → CoreEvent streams per choice.
import { ApiError } from "../errors/api-error.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { Scheduler, SeqEvent } from "../scheduler/scheduler.ts";
import type { ChatMessage, GenerationParams, ResponseFormat, ToolChoice, ToolDef } from "./chat-types.ts";
import { checkPromptBound, fitContext } from "./context.ts";
import type { CoreEvent, FinishReason } from "./events.ts";
import { OutputParser } from "./output-parser.ts";
import { OFF_THREAD_BYTES, type Tokenizers } from "./tokenizer.ts";

export interface GenerateRequest extends GenerationParams {
  model: ModelEntry;
  signal: AbortSignal;
}

export interface Generation {
  inputTokens: number;
  choices: AsyncIterable<CoreEvent>[];
}

export interface CoreDeps {
  scheduler: Scheduler;
  tokenizers: Tokenizers;
}

/** Text the assistant turn starts with when a tool call is required: the model then only writes the arguments. */
export function forcedToolPrefix(choice: ToolChoice, tools: ToolDef[] | null): string | null {
  if (!tools?.length) return null;
  if (typeof choice === "object") return `<tool_call>\n{"name": ${JSON.stringify(choice.name)}, "arguments": `;
  if (choice === "required" && tools.length === 1) return `<tool_call>\n{"name": ${JSON.stringify(tools[0]!.function.name)}, "arguments": `;
  return null;
}

export async function startGeneration(deps: CoreDeps, req: GenerateRequest): Promise<Generation> {
  deps.scheduler.assertServing(req.model.id);
  const tokenizer = await deps.tokenizers.get(req.model);
  const tools = req.toolChoice === "none" ? null : req.tools;
  const prefill = forcedToolPrefix(req.toolChoice, tools);
  const rendered = tokenizer.renderChat(withFormatInstruction(req.messages, req.responseFormat), tools);
  // A large prompt that cannot fit is refused from its byte count, without tokenizing; a small one gets the exact count.
  if (rendered.length > OFF_THREAD_BYTES) checkPromptBound(tokenizer.minTokens(rendered), req.maxTokens, req.model.contextLength);
  const promptIds = await tokenizer.encodePrompt(rendered, prefill ?? undefined);
  const maxTokens = fitContext(promptIds.length, req.maxTokens, req.model.contextLength);
  const baseSeed = req.seed ?? Math.floor(Math.random() * 2 ** 31);
  const streams = deps.scheduler.submit(
    Array.from({ length: req.n }, (_, i) => ({
      model: req.model.id,
      promptIds,
      signal: req.signal,
      params: {
        maxTokens,
        temperature: req.temperature,
        topP: req.topP,
        seed: (baseSeed + i) >>> 0,
        stop: req.stop,
        stopTokenIds: req.ignoreEos ? [] : tokenizer.stopTokenIds,
      },
    })),
  );
  const parse = { reasoning: req.model.capabilities.reasoning, tools: !!tools?.length };
  return {
    inputTokens: promptIds.length,
    choices: streams.map((s) => choiceEvents(s, new OutputParser(parse), prefill, req.responseFormat)),
  };
}

function withFormatInstruction(messages: ChatMessage[], format: ResponseFormat): ChatMessage[] {
  if (format.type === "text") return messages;
  const schema = format.type === "json_schema" && format.schema ? ` matching this JSON schema: ${JSON.stringify(format.schema)}` : "";
  const note = `Respond with a single JSON object${schema}, and nothing else.`;
  return [{ role: "system", content: note }, ...messages];
}

async function* choiceEvents(
  seq: AsyncIterable<SeqEvent>,
  parser: OutputParser,
  prefill: string | null,
  format: ResponseFormat,
): AsyncIterable<CoreEvent> {
  if (prefill) parser.push(prefill);
  let text = "";
  try {
    for await (const ev of seq) {
      if (ev.type === "delta") {
        for (const out of parser.push(ev.text)) {
          if (out.type === "text") text += out.text;
          yield out;
        }
        continue;
      }
      const f = ev.finish;
      if (f.reason === "error") {
        yield { type: "error", error: new ApiError(500, "server_error", "The model failed while generating; retry the request") };
        return;
      }
      for (const out of parser.end()) {
        if (out.type === "text") text += out.text;
        yield out;
      }
      yield { type: "usage", inputTokens: f.promptTokens, outputTokens: f.outputTokens };
      if (prefill && parser.toolCalls === 0 && f.reason !== "cancelled") {
        yield { type: "error", error: malformed("the required tool call's arguments were not valid JSON") };
        return;
      }
      if (format.type !== "text" && f.reason === "stop" && !isJsonObject(text)) {
        yield { type: "error", error: malformed("its output was not the JSON object response_format asked for") };
        return;
      }
      const reason: FinishReason = f.reason === "length" ? "length" : f.reason === "cancelled" ? "cancelled" : parser.toolCalls > 0 ? "tool_calls" : "stop";
      yield { type: "finish", reason, stopSequence: f.stopSequence ?? null };
    }
  } catch (e) {
    yield { type: "error", error: e instanceof ApiError ? e : ApiError.internal() };
  }
}

function malformed(what: string): ApiError {
  return new ApiError(500, "server_error", `The model produced malformed output (${what}); retrying may succeed`);
}

function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text.trim());
    return !!v && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}
