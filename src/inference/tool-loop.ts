// The core's built-in tool loop (web_search): a generation that ends calling web_search gets the search run by
// kiln, the call and its numbered results appended to the conversation, and another generation, all inside the
// same response: one event stream whose block indexes keep counting, usage summed over the steps, and one
// settlement by the lifecycle around it. Families only switch it on (withWebSearch) and encode its blocks.
import { ApiError } from "../errors/api-error.ts";
import type { SearchBackend } from "../tools/search-backend.ts";
import { SearchError } from "../tools/search-backend.ts";
import { failureText, type NumberedSource, queryOf, resultText, WEB_SEARCH_FUNCTION, WEB_SEARCH_TOOL } from "../tools/web-search.ts";
import { type CoreEvent, emptyUsage, type SearchOutcome, type Usage } from "./blocks.ts";
import { type Conversation, type Part, textOf } from "./conversation.ts";
import { type CoreDeps, prepareGeneration, type Prepared, submitGeneration } from "./generate.ts";
import { newCallId } from "./ids.ts";
import type { CoreRequest, ToolChoice } from "./request.ts";

export interface WebSearchSetup {
  backend: SearchBackend;
  /** Most searches one response runs; a call past it fails, and the step after it no longer offers the tool. */
  maxCalls: number;
}

/**
 * Most tokens a forced search step may spend on its call: a query is short, and a model that cannot write one
 * (random weights write an endless string) should not burn the answer's budget on it.
 */
export const FORCED_QUERY_TOKENS = 64;

/** The request with web_search on: the model sees it as one more function tool; `forced` makes the first step call it. */
export function withWebSearch(request: CoreRequest, setup: WebSearchSetup, forced: boolean): CoreRequest {
  return {
    ...request,
    tools: [...(request.tools ?? []), WEB_SEARCH_TOOL],
    toolChoice: forced ? { name: WEB_SEARCH_FUNCTION } : request.toolChoice,
    webSearch: setup,
  };
}

const forcesSearch = (c: ToolChoice) => typeof c === "object" && c.name === WEB_SEARCH_FUNCTION;

/** The last user turn's text: the query of a forced search whose model could not write one. */
function lastUserText(conv: Conversation): string {
  for (let i = conv.length - 1; i >= 0; i--) if (conv[i]!.role === "user") return textOf(conv[i]!.parts).trim().slice(0, 500);
  return "";
}

interface Step {
  usage: Usage | null;
  finish: Extract<CoreEvent, { type: "finish" }> | null;
  error: ApiError | null;
  /** web_search calls the model made, in order, with their JSON arguments. */
  calls: { id: string; args: string }[];
  /** Calls of the client's own function tools: they go back to the client, so the loop stops. */
  clientCalls: number;
  /** The step's reasoning and text, for the assistant turn the next step sees. */
  parts: Part[];
  /** Events to show, with the step's own block indexes (held back while a forced call is being written). */
  shown: CoreEvent[];
}

/** Reads one step's events: web_search calls are taken out of the stream, everything else passes with its index. */
function readEvent(s: Step, ev: CoreEvent, calls: Map<number, { id: string; args: string }>, texts: Map<number, Part>): CoreEvent | null {
  switch (ev.type) {
    case "block_start":
      if (ev.block.kind === "tool_call" && ev.block.name === WEB_SEARCH_FUNCTION) {
        calls.set(ev.index, { id: ev.block.id, args: "" });
        return null;
      }
      if (ev.block.kind === "tool_call") s.clientCalls++;
      else if (ev.block.kind === "text" || ev.block.kind === "reasoning") {
        const part: Part = ev.block.kind === "text" ? { type: "text", text: "" } : { type: "reasoning", text: "" };
        texts.set(ev.index, part);
        s.parts.push(part);
      }
      return ev;
    case "block_delta": {
      const call = calls.get(ev.index);
      if (call) {
        call.args += ev.delta;
        return null;
      }
      const part = texts.get(ev.index);
      if (part && (part.type === "text" || part.type === "reasoning")) part.text += ev.delta;
      return ev;
    }
    case "block_end": {
      const call = calls.get(ev.index);
      if (!call) return ev;
      s.calls.push(call);
      return null;
    }
    case "usage":
      s.usage = ev.usage;
      return null;
    case "finish":
      s.finish = ev;
      return null;
    case "error":
      s.error = ev.error;
      return null;
  }
}

function add(total: Usage, u: Usage): void {
  // Every step's prompt is billed: the second step re-reads the first one's prompt plus the call and results.
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  total.reasoningTokens += u.reasoningTokens;
  total.cachedTokens += u.cachedTokens;
}

/** Runs the search of one call; any failure of the backend becomes a failed outcome the model is told about. */
async function search(setup: WebSearchSetup, query: string | null, first: number, signal: AbortSignal): Promise<{ outcome: SearchOutcome; text: string }> {
  if (!query) return failed("the call had no query");
  try {
    const results = await setup.backend.search(query, { signal });
    const sources: NumberedSource[] = results.map((r, i) => ({ n: first + i, title: r.title, url: r.url }));
    return { outcome: { status: "completed", sources }, text: resultText(query, results, first) };
  } catch (e) {
    if (signal.aborted) return failed("the request was stopped");
    return failed(e instanceof SearchError ? e.message : "the search backend failed");
  }
}

function failed(reason: string): { outcome: SearchOutcome; text: string } {
  return { outcome: { status: "failed", reason }, text: failureText(reason) };
}

/** True when a step must call web_search: its output is the call alone, and its query gets a small token budget. */
const forcedStep = (p: Prepared) => forcesSearch(p.request.toolChoice) && p.forcedCall;

function submitStep(deps: CoreDeps, p: Prepared, signal: AbortSignal, onStart?: () => void): AsyncIterable<CoreEvent> {
  return submitGeneration(deps, forcedStep(p) ? { ...p, maxTokens: Math.min(p.maxTokens, FORCED_QUERY_TOKENS) } : p, signal, onStart)[0]!;
}

/**
 * The events of a request with web_search on. The first step is submitted now, so a refusal (queue full, shutting
 * down) is thrown to the caller as it is without built-in tools; later steps report theirs as error events.
 * `onStart` hears when the first step leaves the queue.
 */
export function toolLoop(deps: CoreDeps, first: Prepared, signal: AbortSignal, onStart?: () => void): AsyncIterable<CoreEvent> {
  return loop(deps, first, signal, submitStep(deps, first, signal, onStart));
}

async function* loop(deps: CoreDeps, first: Prepared, signal: AbortSignal, firstStream: AsyncIterable<CoreEvent>): AsyncGenerator<CoreEvent> {
  const setup = first.request.webSearch!;
  const budget = first.request.maxTokens;
  const total = emptyUsage();
  let prepared = first;
  let nextIndex = 0;
  let attempts = 0;
  let sources = 0;
  for (let step = 0; ; step++) {
    const request = prepared.request;
    const forced = forcedStep(prepared);
    const s: Step = { usage: null, finish: null, error: null, calls: [], clientCalls: 0, parts: [], shown: [] };
    const calls = new Map<number, { id: string; args: string }>();
    const texts = new Map<number, Part>();
    const indexes = new Map<number, number>();
    const renumber = (ev: CoreEvent): CoreEvent => {
      if (ev.type !== "block_start" && ev.type !== "block_delta" && ev.type !== "block_end") return ev;
      if (!indexes.has(ev.index)) indexes.set(ev.index, nextIndex++);
      return { ...ev, index: indexes.get(ev.index)! };
    };
    try {
      for await (const ev of step === 0 ? firstStream : submitStep(deps, prepared, signal)) {
        const shown = readEvent(s, ev, calls, texts);
        // A forced step's output is the call alone; it is held back so a call that never came out shows nothing.
        if (shown && forced) s.shown.push(shown);
        else if (shown) yield renumber(shown);
      }
    } catch (e) {
      s.error = e instanceof ApiError ? e : ApiError.internal();
    }
    if (s.usage) add(total, s.usage);
    yield { type: "usage", usage: { ...total } };
    // A forced search whose model could not write its call (cut by the query budget, or malformed) searches for
    // the user's last message instead: the client asked for a search, and the question is the best query there is.
    const fallback = forced && !s.calls.length && !signal.aborted && (s.finish?.reason === "length" || s.error?.status === 500);
    if (fallback) {
      s.calls.push({ id: newCallId(), args: JSON.stringify({ query: lastUserText(request.conversation) }) });
      s.error = null;
      s.parts = [];
    } else {
      for (const ev of s.shown) yield renumber(ev);
    }
    if (s.error) {
      yield { type: "error", error: s.error };
      return;
    }
    if (!s.calls.length) {
      yield s.finish ?? { type: "finish", reason: "stop", stopSequence: null };
      return;
    }

    const assistant: Part[] = [...s.parts];
    const results: Part[] = [];
    for (const call of s.calls) {
      const query = queryOf(call.args);
      const index = nextIndex++;
      yield { type: "block_start", index, block: { kind: "web_search_call", id: call.id, name: WEB_SEARCH_FUNCTION, query: query ?? "" } };
      const r = attempts < setup.maxCalls ? await search(setup, query, sources + 1, signal) : failed(`at most ${setup.maxCalls} searches may run per response`);
      attempts++;
      if (r.outcome.status === "completed") sources += r.outcome.sources.length;
      yield { type: "block_end", index, search: r.outcome };
      assistant.push({ type: "tool_call", id: call.id, name: WEB_SEARCH_FUNCTION, arguments: { query: query ?? "" } });
      results.push({ type: "tool_result", callId: call.id, parts: [{ type: "text", text: r.text }], isError: r.outcome.status === "failed" });
    }
    if (signal.aborted) {
      yield { type: "finish", reason: "cancelled", stopSequence: null };
      return;
    }
    // The client's own calls end the response (the client runs them); so does the step bound.
    const left = budget === null ? null : budget - total.outputTokens;
    if (s.clientCalls > 0 || step >= setup.maxCalls || (left !== null && left <= 0)) {
      const reason = s.clientCalls > 0 ? "tool_calls" : left !== null && left <= 0 ? "length" : (s.finish?.reason ?? "stop");
      yield { type: "finish", reason, stopSequence: null };
      return;
    }
    const conversation: Conversation = [...request.conversation, { role: "assistant", parts: assistant }, { role: "tool", parts: results }];
    const tools = attempts >= setup.maxCalls ? (request.tools ?? []).filter((t) => t.function.name !== WEB_SEARCH_FUNCTION) : request.tools ?? [];
    // A forced or required call was made: the next step may answer in text.
    const toolChoice: ToolChoice = !tools.length || request.toolChoice === "none" ? "none" : "auto";
    try {
      prepared = await prepareGeneration(deps, prepared.model, { ...request, conversation, tools: tools.length ? tools : null, toolChoice, maxTokens: left });
    } catch (e) {
      yield { type: "error", error: e instanceof ApiError ? e : ApiError.internal() };
      return;
    }
  }
}
