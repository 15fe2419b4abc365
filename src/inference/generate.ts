// The format-neutral generation core: conversation → prompt (the model's template and prompt format) → context
// check → scheduler sequences → block events per choice, with usage counted from the tokens the worker generated.
import { ApiError } from "../errors/api-error.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { MediaInput, OutputConstraint, PrefixScope, SingleCall, ThinkingBudget } from "../protocol/text.ts";
import type { SeqEvent } from "../scheduler/scheduler.ts";
import { BlockFramer, type CoreEvent, type FinishReason, type ParsedEvent, type Usage } from "./blocks.ts";
import { forcedCall, outputConstraint } from "./constraint.ts";
import { checkPromptBound, fitContext } from "./context.ts";
import { type Conversation, type MediaPart, mediaParts } from "./conversation.ts";
import type { CoreDeps } from "./core-deps.ts";
import { expandPlaceholders, type MediaSlot, mediaSlots } from "./media-placement.ts";
import { OutputParser, type ParserOptions } from "./output-parser.ts";
import { prefixScope, publicTokens } from "./public-prefix.ts";
import { jsonInstructionFor, type PromptFormat } from "./prompt-format.ts";
import type { AnswerFormat, CoreRequest } from "./request.ts";
import { toLogprobs, toPromptLogprobs } from "./logprobs.ts";
import { rawPromptIds } from "./raw-prompt.ts";
import { samplerParams } from "./samplers.ts";
import type { ServiceTier } from "./service-tier.ts";
import { singleCallRule } from "./single-call.ts";
import { bannedWhenOff, budgetOf, closeFraming, opensThinking, reasoningOff, startAfterOf, thinkingClose, thinkingTokens } from "./thinking.ts";
import { type ModelTokenizer, OFF_THREAD_BYTES } from "./tokenizer.ts";

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
  /** Special tokens the parser gives no meaning to in this request: template markup, never answer text. */
  silentTokenIds: number[];
  /** Ids never sampled (the thinking open marker when reasoning is off). */
  bannedTokenIds: number[];
  thinking?: ThinkingBudget;
  /** The output is held to a JSON grammar (src/inference/constraint.ts). */
  constraint?: OutputConstraint;
  /** At most one tool call, kept by the worker (src/inference/single-call.ts). */
  singleCall?: SingleCall;
  /** Encoder inputs whose features replace their runs of placeholder ids in promptIds (none for text). */
  media: MediaInput[];
  /** Min-p, penalties and logit bias as the worker takes them (empty when the request sets none). */
  samplers: ReturnType<typeof samplerParams>;
  /** Whose prefix cache it uses, and who may share its prompt's cached prefix (absent: it does not use the cache). */
  owner?: PrefixOwner;
  prefix?: PrefixScope;
  /** The lane its sequences wait and run in (absent: default), the run's scope's. */
  lane?: ServiceTier;
}

/** Whose prefix cache a request uses: its team (the server's sharing setting decides what that means). */
export interface PrefixOwner {
  teamId: number;
  sharing: "team" | "all";
}

function withFormatInstruction(conv: Conversation, format: AnswerFormat, prompt: PromptFormat): Conversation {
  if (format.kind === "text") return conv;
  const note = jsonInstructionFor(prompt, format.kind === "json_schema" ? format.schema : null);
  return [{ role: "system", parts: [{ type: "text", text: note }] }, ...conv];
}

/** Every special token but the markers the parser reads (with ignoreEos the end-of-turn tokens are text otherwise). */
function silentIds(special: ReadonlyMap<string, number>, parser: Omit<ParserOptions, "newCallId">): number[] {
  const read = new Set([parser.thinking?.open, parser.thinking?.close, parser.toolCall?.open, parser.toolCall?.close]);
  return [...special].flatMap(([text, id]) => (read.has(text) ? [] : [id]));
}

/**
 * Each media part's placeholders in the model's prompt. A model without a media layout places none: a media part
 * that reached here for it (no intake ran, or its manifest claims a medium it has no encoder for) is refused
 * naming the item, never dropped from the prompt.
 */
export function placeMedia(conv: Conversation, model: ModelEntry): Map<MediaPart, MediaSlot[]> {
  const parts = mediaParts(conv);
  const slots = new Map<MediaPart, MediaSlot[]>();
  for (const part of parts) {
    if (!model.media || !part.decoded) {
      const medium = part.decoded?.medium ?? (part.declared === "file" ? "file" : part.declared);
      throw ApiError.badRequest(`${part.at}: the model '${model.id}' cannot place ${medium} input in its prompt on this server.`, part.at);
    }
    slots.set(part, mediaSlots(model.media, part));
  }
  return slots;
}

/** Renders, bounds, tokenizes and fits the prompt; throws the family-neutral 400/503 errors. `owner`: its prefix-cache scope. */
export async function prepareGeneration(deps: CoreDeps, model: ModelEntry, request: CoreRequest, owner?: PrefixOwner): Promise<Prepared> {
  deps.scheduler.assertServing(model.id);
  const slots = placeMedia(request.conversation, model);
  // A multimodal model's template gets every message's content as parts (what such templates expect), media or not.
  const placeholders = model.media ? (p: MediaPart) => slots.get(p) ?? [] : undefined;
  const tokenizer = await deps.tokenizers.get(model);
  const samplers = samplerParams(request.samplers, tokenizer.vocabSize);
  if (request.rawPrompt !== undefined) return prepareRaw(model, request, tokenizer, samplers, owner);
  const format = tokenizer.format;
  const tools = request.toolChoice === "none" ? null : request.tools;
  const call = forcedCall(format, request.toolChoice, tools);
  const rendered = tokenizer.renderChat(withFormatInstruction(request.conversation, request.answerFormat, format), tools, request.templateOptions, placeholders);
  // With reasoning off the parser reads no thinking markers and the open marker is never sampled: no answer, in
  // any format, carries a thinking block (random or obstinate weights open one after answering otherwise).
  const off = reasoningOff(request.templateOptions);
  const thinking = model.capabilities.reasoning && !off ? format.thinking : null;
  const startInThinking = opensThinking(rendered, thinking);
  // After an opened thinking block the model thinks first: the worker writes a forced call's opening once the block
  // closes. Without a one-token close marker or a constrained call it cannot, so the prompt closes the block itself.
  const close = startInThinking ? thinkingClose(tokenizer, call?.spec ? call.prefix : "") : null;
  const callInPrompt = call !== null && !(close && call.spec);
  const opening = callInPrompt ? (startInThinking ? closeFraming(thinking!.close, call.prefix) : call.prefix) : "";
  const prefill = request.assistantPrefill || opening ? `${request.assistantPrefill ?? ""}${opening}` : null;
  // A huge prompt that cannot fit is refused from its byte count, without tokenizing; a smaller one is counted, so
  // its 400 carries the exact figures the spec asks for.
  if (rendered.length > OFF_THREAD_BYTES) checkPromptBound(tokenizer.minTokens(rendered), request.maxTokens, model.contextLength);
  const encoded = await tokenizer.encodePrompt(rendered, prefill ?? undefined);
  // Each placeholder becomes the rows its encoder fills: they are prompt tokens like any other (context, usage, billing).
  // A placeholder the client typed, with no media to fill it, is refused here too.
  const { promptIds, media } = model.media ? expandPlaceholders(encoded, model.media, [...slots.values()].flat()) : { promptIds: encoded, media: [] };
  const maxTokens = fitContext(promptIds.length, request.maxTokens, model.contextLength);
  const thinks = close !== null && !callInPrompt;
  const budget = thinks ? thinkingTokens(request.thinkingBudget, maxTokens, answerRequired(call !== null, request)) : undefined;
  const constraint = outputConstraint(tokenizer, {
    call, format: request.answerFormat, tools, prefilled: !!request.assistantPrefill, ignoreEos: request.ignoreEos, ...(thinks ? { startAfter: startAfterOf(close) } : {}),
  });
  const toolCall = tools?.length ? format.toolCall : null;
  const single = !!request.singleToolCall && toolCall !== null;
  const parser = { thinking, toolCall, startInThinking, ...(single ? { singleCall: true } : {}) };
  // A thinking block the worker cannot see close would let its markers count: the parser alone keeps the rule then.
  const tracked = !startInThinking || thinks || callInPrompt;
  const singleCall = single && tracked
    ? singleCallRule(tokenizer, toolCall, { opened: callInPrompt && call.prefix.includes(toolCall.open), ...(thinks ? { startAfter: close.closeTokenId } : {}) })
    : undefined;
  const prefix = owner && prefixScope(owner.teamId, owner.sharing, await publicTokens(tokenizer, model.publicPrefixes, promptIds));
  return {
    model,
    request,
    promptIds,
    maxTokens,
    prefill,
    forcedCall: call !== null,
    parser,
    stopTokenIds: request.ignoreEos ? [] : tokenizer.stopTokenIds,
    silentTokenIds: silentIds(tokenizer.specialTokens, parser),
    bannedTokenIds: off ? bannedWhenOff(tokenizer, format.thinking) : [],
    ...(budget !== undefined && close ? { thinking: budgetOf(close, budget) } : {}),
    ...(constraint ? { constraint } : {}),
    ...(singleCall ? { singleCall } : {}),
    media,
    samplers,
    ...(owner && prefix ? { owner, prefix } : {}),
  };
}

/**
 * A raw prompt (no template): continued as plain text, with no thinking or tool-call markers read, no constraint,
 * the model's end-of-turn tokens still ending it. Its cached prefix is shared as a chat prompt's is.
 */
async function prepareRaw(model: ModelEntry, request: CoreRequest, tokenizer: ModelTokenizer, samplers: Prepared["samplers"], owner?: PrefixOwner): Promise<Prepared> {
  const promptIds = await rawPromptIds(tokenizer, request.rawPrompt!, request.maxTokens, model.contextLength);
  const maxTokens = fitContext(promptIds.length, request.maxTokens, model.contextLength);
  const parser = { thinking: null, toolCall: null, startInThinking: false };
  const prefix = owner && prefixScope(owner.teamId, owner.sharing, await publicTokens(tokenizer, model.publicPrefixes, promptIds));
  return {
    model, request, promptIds, maxTokens, prefill: null, forcedCall: false, parser,
    stopTokenIds: request.ignoreEos ? [] : tokenizer.stopTokenIds,
    silentTokenIds: silentIds(tokenizer.specialTokens, parser),
    bannedTokenIds: [],
    media: [],
    samplers,
    ...(owner && prefix ? { owner, prefix } : {}),
  };
}

/** Whether the answer must be a call or JSON (then thinking leaves it room: thinking.ts). */
const answerRequired = (forcedCall: boolean, r: CoreRequest) => forcedCall || r.answerFormat.kind !== "text";

/** The prepared request with its output capped at `cap` tokens; a thinking budget shrinks with it, as prepare sizes it. */
export function capOutput(p: Prepared, cap: number): Prepared {
  const maxTokens = Math.min(p.maxTokens, cap);
  if (!p.thinking) return { ...p, maxTokens };
  const budget = thinkingTokens(p.thinking.budget, maxTokens, answerRequired(p.forcedCall, p.request))!;
  return { ...p, maxTokens, thinking: { ...p.thinking, budget } };
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
      ...(p.media.length ? { media: p.media } : {}),
      ...(p.prefix ? { prefix: p.prefix } : {}),
      signal,
      onStart,
      ...(p.lane ? { lane: p.lane } : {}),
      params: {
        maxTokens: p.maxTokens, temperature: r.temperature, topP: r.topP, seed: (baseSeed + i) >>> 0, stop: r.stop, stopTokenIds: p.stopTokenIds,
        ...(p.silentTokenIds.length ? { silentTokenIds: p.silentTokenIds } : {}),
        ...(p.bannedTokenIds.length ? { bannedTokenIds: p.bannedTokenIds } : {}),
        ...(r.topK ? { topK: r.topK } : {}),
        ...p.samplers,
        ...(r.logprobs !== undefined ? { logprobs: r.logprobs } : {}),
        ...(r.promptLogprobs !== undefined ? { promptLogprobs: r.promptLogprobs } : {}),
        ...(p.thinking ? { thinking: p.thinking } : {}),
        ...(p.constraint ? { constraint: p.constraint } : {}),
        ...(p.singleCall ? { singleCall: p.singleCall } : {}),
      },
    })),
  );
  return streams.map((s) => choiceEvents(s, new OutputParser(p.parser), p, r.answerFormat));
}

async function* choiceEvents(seq: AsyncIterable<SeqEvent>, parser: OutputParser, p: Prepared, format: AnswerFormat): AsyncIterable<CoreEvent> {
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
        if (ev.promptLogprobs) yield { type: "prompt_logprobs", logprobs: toPromptLogprobs(ev.promptLogprobs) };
        const thinking = parser.inReasoning;
        const out = frame(parser.push(ev.text));
        usage.outputTokens += ev.tokens;
        if (thinking || parser.inReasoning) usage.reasoningTokens += ev.tokens;
        // Thinking tokens are not the answer's: their log probabilities are left out, as their text is.
        if (ev.logprobs?.length && !(thinking && parser.inReasoning)) yield { type: "logprobs", logprobs: toLogprobs(ev.logprobs) };
        yield* out;
        continue;
      }
      const f = ev.finish;
      // The worker's own count is authoritative (it includes tokens that produced no text).
      usage.outputTokens = f.outputTokens;
      // Prompt tokens whose KV came from the worker's prefix cache; never more than the prompt (billing refuses that).
      usage.cachedTokens = Math.min(f.cachedTokens ?? 0, inputTokens);
      const last = [...frame(parser.end()), ...framer.end()];
      yield* last;
      yield { type: "usage", usage };
      // The model ending its turn inside a call (not the token limit) wrote a call that cannot be used.
      if (f.reason === "stop" && last.some((e) => e.type === "block_end" && e.cut)) {
        yield { type: "error", error: malformed("the model ended its turn inside a tool call") };
        return;
      }
      // A constrained answer cut by max_tokens is a length finish, not malformed output.
      const cut = !!p.constraint && f.reason === "length";
      if (forcedCall && parser.toolCalls === 0 && f.reason !== "cancelled" && !cut) {
        yield { type: "error", error: malformed("the forced tool call was not written") };
        return;
      }
      if (format.kind !== "text" && f.reason === "stop" && !(p.constraint ? isJson(text) : isJsonObject(text))) {
        yield { type: "error", error: malformed("its output was not the JSON the answer format asked for") };
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
