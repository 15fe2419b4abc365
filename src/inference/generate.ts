// The format-neutral generation core: conversation → prompt (the model's template and prompt format) → context
// check → scheduler sequences → block events per choice, with usage counted from the tokens the worker generated.
import { ApiError } from "../errors/api-error.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { OutputConstraint, ThinkingBudget } from "../scheduler/protocol.ts";
import type { SeqEvent } from "../scheduler/scheduler.ts";
import { BlockFramer, type CoreEvent, type FinishReason, type ParsedEvent, type Usage } from "./blocks.ts";
import { forcedCall, outputConstraint } from "./constraint.ts";
import { checkPromptBound, fitContext } from "./context.ts";
import type { Conversation } from "./conversation.ts";
import type { CoreDeps } from "./core-deps.ts";
import { OutputParser, type ParserOptions } from "./output-parser.ts";
import { jsonInstructionFor, type PromptFormat } from "./prompt-format.ts";
import type { CoreRequest, ResponseFormat } from "./request.ts";
import { type ModelTokenizer, OFF_THREAD_BYTES } from "./tokenizer.ts";

// The scheduler and tokenizers as the core calls them (small interfaces: tests pass fakes).
export type { CoreDeps };

/** A request turned into tokens and checked against the context window, not yet submitted. */
export interface Prepared {
  model: ModelEntry;
  request: CoreRequest;
  promptIds: number[];
  /** The output budget each choice gets. */
  maxTokens: number;
  /** Text the assistant turn starts with (a forced call's opening, a client's prefill); it is not part of the answer. */
  prefill: string | null;
  /** A tool call was forced: an answer without one is malformed output. */
  forcedCall: boolean;
  parser: Omit<ParserOptions, "newCallId">;
  stopTokenIds: number[];
  thinking?: ThinkingBudget;
  /** The output is held to a JSON grammar (src/inference/constraint.ts). */
  constraint?: OutputConstraint;
}

function withFormatInstruction(conv: Conversation, format: ResponseFormat, prompt: PromptFormat): Conversation {
  if (format.type === "text") return conv;
  const note = jsonInstructionFor(prompt, format.type === "json_schema" ? format.schema : null);
  return [{ role: "system", parts: [{ type: "text", text: note }] }, ...conv];
}

/** True when the rendered prompt ends inside an opened thinking block (a template's enable_thinking did that). */
export function opensThinking(rendered: string, thinking: PromptFormat["thinking"]): boolean {
  return !!thinking && rendered.trimEnd().endsWith(thinking.open);
}

/**
 * The worker's thinking budget for a prompt that opened a thinking block: the close marker must be one token (so
 * the worker can see the model close it), and what the worker forces is the marker with the template's framing.
 */
export function thinkingBudget(tokenizer: ModelTokenizer, opened: boolean, budget: number | undefined): ThinkingBudget | undefined {
  const close = tokenizer.format.thinking?.close;
  if (!opened || budget === undefined || !close) return undefined;
  const ids = tokenizer.encodeText(close);
  if (ids.length !== 1) return undefined;
  return { budget, closeTokenId: ids[0]!, forceIds: tokenizer.encodeText(`\n${close}\n\n`) };
}

/** Renders, bounds, tokenizes and fits the prompt; throws the family-neutral 400/503 errors. */
export async function prepareGeneration(deps: CoreDeps, model: ModelEntry, request: CoreRequest): Promise<Prepared> {
  deps.scheduler.assertServing(model.id);
  const tokenizer = await deps.tokenizers.get(model);
  const format = tokenizer.format;
  const tools = request.toolChoice === "none" ? null : request.tools;
  const call = forcedCall(format, request.toolChoice, tools);
  const forced = call?.prefix ?? null;
  const prefill = request.assistantPrefill || forced ? `${request.assistantPrefill ?? ""}${forced ?? ""}` : null;
  const rendered = tokenizer.renderChat(withFormatInstruction(request.conversation, request.responseFormat, format), tools, request.templateOptions);
  // A huge prompt that cannot fit is refused from its byte count, without tokenizing; a smaller one is counted, so
  // its 400 carries the exact figures the spec asks for.
  if (rendered.length > OFF_THREAD_BYTES) checkPromptBound(tokenizer.minTokens(rendered), request.maxTokens, model.contextLength);
  const promptIds = await tokenizer.encodePrompt(rendered, prefill ?? undefined);
  const thinking = model.capabilities.reasoning ? format.thinking : null;
  const startInThinking = opensThinking(rendered, thinking);
  const budget = thinkingBudget(tokenizer, startInThinking, request.thinkingBudget);
  const constraint = outputConstraint(tokenizer, {
    call, format: request.responseFormat, tools, prefilled: !!request.assistantPrefill, startInThinking, ignoreEos: request.ignoreEos,
  });
  return {
    model,
    request,
    promptIds,
    maxTokens: fitContext(promptIds.length, request.maxTokens, model.contextLength),
    prefill,
    forcedCall: forced !== null,
    parser: { thinking, toolCall: tools?.length ? format.toolCall : null, startInThinking },
    stopTokenIds: request.ignoreEos ? [] : tokenizer.stopTokenIds,
    ...(budget ? { thinking: budget } : {}),
    ...(constraint ? { constraint } : {}),
  };
}

/**
 * Admits the prepared sequences (n choices share one admission) and returns one event stream per choice; `onStart`
 * hears when a sequence leaves the queue for a worker.
 */
export function submitGeneration(deps: CoreDeps, p: Prepared, signal: AbortSignal, onStart?: () => void): AsyncIterable<CoreEvent>[] {
  const r = p.request;
  const baseSeed = r.seed ?? Math.floor(Math.random() * 2 ** 31);
  const streams = deps.scheduler.submit(
    Array.from({ length: r.n }, (_, i) => ({
      model: p.model.id,
      promptIds: p.promptIds,
      signal,
      onStart,
      params: {
        maxTokens: p.maxTokens, temperature: r.temperature, topP: r.topP, seed: (baseSeed + i) >>> 0, stop: r.stop, stopTokenIds: p.stopTokenIds,
        ...(r.topK ? { topK: r.topK } : {}),
        ...(p.thinking ? { thinking: p.thinking } : {}),
        ...(p.constraint ? { constraint: p.constraint } : {}),
      },
    })),
  );
  return streams.map((s) => choiceEvents(s, new OutputParser(p.parser), p, r.responseFormat));
}

async function* choiceEvents(seq: AsyncIterable<SeqEvent>, parser: OutputParser, p: Prepared, format: ResponseFormat): AsyncIterable<CoreEvent> {
  const { prefill, forcedCall } = p;
  const inputTokens = p.promptIds.length;
  const framer = new BlockFramer();
  const usage: Usage = { inputTokens, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 };
  let text = "";
  const frame = (parsed: ParsedEvent[]): CoreEvent[] => {
    for (const p of parsed) if (p.type === "text") text += p.text;
    return parsed.flatMap((p) => framer.push(p));
  };
  if (prefill) parser.push(prefill);
  try {
    for await (const ev of seq) {
      if (ev.type === "delta") {
        const thinking = parser.inReasoning;
        const out = frame(parser.push(ev.text));
        usage.outputTokens += ev.tokens;
        if (thinking || parser.inReasoning) usage.reasoningTokens += ev.tokens;
        yield* out;
        continue;
      }
      const f = ev.finish;
      // The worker's own count is authoritative (it includes tokens that produced no text).
      usage.outputTokens = f.outputTokens;
      if (f.reason === "error") {
        yield { type: "usage", usage };
        yield { type: "error", error: new ApiError(500, "server_error", "The model failed while generating; retry the request") };
        return;
      }
      yield* frame(parser.end());
      yield* framer.end();
      yield { type: "usage", usage };
      // A constrained answer cut by max_tokens is a length finish, not malformed output.
      const cut = !!p.constraint && f.reason === "length";
      if (forcedCall && parser.toolCalls === 0 && f.reason !== "cancelled" && !cut) {
        yield { type: "error", error: malformed("the required tool call's arguments were not valid JSON") };
        return;
      }
      if (format.type !== "text" && f.reason === "stop" && !(p.constraint ? isJson(text) : isJsonObject(text))) {
        yield { type: "error", error: malformed("its output was not the JSON object response_format asked for") };
        return;
      }
      const reason: FinishReason = f.reason === "length" ? "length" : f.reason === "cancelled" ? "cancelled" : parser.toolCalls > 0 ? "tool_calls" : "stop";
      yield { type: "finish", reason, stopSequence: f.stopSequence ?? null };
    }
  } catch (e) {
    // The sequence failed (worker lost, shutdown): what was generated so far is still counted.
    yield { type: "usage", usage };
    yield { type: "error", error: e instanceof ApiError ? e : ApiError.internal() };
  }
}

function malformed(what: string): ApiError {
  return new ApiError(500, "server_error", `The model produced malformed output (${what}); retrying may succeed`);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text.trim());
    return true;
  } catch {
    return false;
  }
}

function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text.trim());
    return !!v && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}
