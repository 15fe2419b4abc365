// The core's built-in tool loop: a generation that ends calling a tool kiln runs itself (builtin-tool.ts) gets the
// call run, the call and its result appended to the conversation, and another generation, all inside the same
// response: one event stream whose block indexes keep counting, usage summed over the steps, and one settlement by
// the text run around it (text-run.ts). Families only switch it on (withBuiltins) and encode its blocks.
import { ApiError } from "../errors/api-error.ts";
import { type CoreEvent, emptyUsage, type Usage } from "./blocks.ts";
import { builtinName, type BuiltinResult, type BuiltinSession, type BuiltinTool } from "./builtin-tool.ts";
import { newCallId } from "./call-id.ts";
import { type Conversation, parseArguments, type Part } from "./conversation.ts";
import type { CoreDeps } from "./core-deps.ts";
import { capOutput, prepareGeneration, type Prepared, submitGeneration } from "./generate.ts";
import { inertPlaceholders } from "./media-placement.ts";
import type { CoreRequest } from "./request.ts";
import type { ToolChoice } from "./tool-def.ts";

/** The request with built-in tools on: the model sees each as one more function tool; `forced` names one the first step must call. */
export function withBuiltins(request: CoreRequest, tools: BuiltinTool[], forced: string | null): CoreRequest {
  return {
    ...request,
    tools: [...(request.tools ?? []), ...tools.map((t) => t.definition)],
    toolChoice: forced ? { name: forced } : request.toolChoice,
    builtins: tools,
  };
}

/** The built-in tool a step is forced to call, if any. */
function forcedBuiltin(p: Prepared): BuiltinTool | undefined {
  const c = p.request.toolChoice;
  return p.forcedCall && typeof c === "object" ? p.request.builtins?.find((t) => builtinName(t) === c.name) : undefined;
}

interface Call {
  id: string;
  name: string;
  args: string;
}

interface Step {
  usage: Usage | null;
  finish: Extract<CoreEvent, { type: "finish" }> | null;
  error: ApiError | null;
  /** Built-in calls the model wrote whole, in order. */
  calls: Call[];
  /** Calls of the client's own function tools: they go back to the client, so the loop stops. */
  clientCalls: number;
  /** The step's reasoning and text, for the assistant turn the next step sees. */
  parts: Part[];
  /** Events to show, with the step's own block indexes (held back while a forced call is being written). */
  shown: CoreEvent[];
}

/** Reads one step's events: built-in calls are taken out of the stream, everything else passes with its index. */
function readEvent(s: Step, ev: CoreEvent, builtins: Set<string>, calls: Map<number, Call>, texts: Map<number, Part>): CoreEvent | null {
  switch (ev.type) {
    case "block_start":
      if (ev.block.kind === "tool_call" && builtins.has(ev.block.name)) {
        calls.set(ev.index, { id: ev.block.id, name: ev.block.name, args: "" });
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
      // A call the token limit cut is not run: its arguments are only a beginning.
      if (!ev.cut) s.calls.push(call);
      return null;
    }
    case "logprobs":
    case "prompt_logprobs":
      return ev;
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

/** Runs one call; a tool that throws gives a failed result the model is told about. */
async function runCall(tool: BuiltinTool, session: BuiltinSession, args: string, signal: AbortSignal): Promise<BuiltinResult> {
  try {
    return await session.run(args, signal);
  } catch {
    return tool.failed(signal.aborted ? "the request was stopped" : `the ${builtinName(tool)} tool failed`);
  }
}

function submitStep(deps: CoreDeps, p: Prepared, signal: AbortSignal, onStart?: () => void): AsyncIterable<CoreEvent> {
  const forced = forcedBuiltin(p);
  return submitGeneration(deps, forced ? capOutput(p, forced.forcedCallTokens) : p, signal, onStart)[0]!;
}

/**
 * The events of a request with built-in tools. The first step is submitted now, so a refusal (queue full, shutting
 * down) is thrown to the caller as it is without them; later steps report theirs as error events. `onStart` hears
 * when the first step leaves the queue.
 */
export function toolLoop(deps: CoreDeps, first: Prepared, signal: AbortSignal, onStart?: () => void): AsyncIterable<CoreEvent> {
  return loop(deps, first, signal, submitStep(deps, first, signal, onStart));
}

async function* loop(deps: CoreDeps, first: Prepared, signal: AbortSignal, firstStream: AsyncIterable<CoreEvent>): AsyncGenerator<CoreEvent> {
  const builtins = first.request.builtins ?? [];
  const byName = new Map(builtins.map((t) => [builtinName(t), { tool: t, session: t.session(), runs: 0 }]));
  const names = new Set(byName.keys());
  const maxSteps = builtins.reduce((n, t) => n + t.maxCalls, 0);
  const budget = first.request.maxTokens;
  const total = emptyUsage();
  let prepared = first;
  let nextIndex = 0;
  for (let step = 0; ; step++) {
    const request = prepared.request;
    const forced = forcedBuiltin(prepared);
    const s: Step = { usage: null, finish: null, error: null, calls: [], clientCalls: 0, parts: [], shown: [] };
    const calls = new Map<number, Call>();
    const texts = new Map<number, Part>();
    const indexes = new Map<number, number>();
    const renumber = (ev: CoreEvent): CoreEvent => {
      if (ev.type !== "block_start" && ev.type !== "block_delta" && ev.type !== "block_end") return ev;
      if (!indexes.has(ev.index)) indexes.set(ev.index, nextIndex++);
      return { ...ev, index: indexes.get(ev.index)! };
    };
    try {
      for await (const ev of step === 0 ? firstStream : submitStep(deps, prepared, signal)) {
        const shown = readEvent(s, ev, names, calls, texts);
        // A forced step's output is the call alone; it is held back so a call that never came out shows nothing.
        if (shown && forced) s.shown.push(shown);
        else if (shown) yield renumber(shown);
      }
    } catch (e) {
      s.error = e instanceof ApiError ? e : ApiError.internal();
    }
    if (s.usage) add(total, s.usage);
    yield { type: "usage", usage: { ...total } };
    // A forced call the model could not write (cut by its token cap, or malformed) runs with the tool's fallback
    // arguments when it has them: the client asked for the call, and the loop can still make it.
    const fallback = forced && !s.calls.length && !signal.aborted && (s.finish?.reason === "length" || s.error?.status === 500)
      ? forced.fallbackArguments(request.conversation)
      : null;
    if (forced && fallback !== null) {
      s.calls.push({ id: newCallId(), name: builtinName(forced), args: fallback });
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
      const entry = byName.get(call.name)!;
      const index = nextIndex++;
      yield { type: "block_start", index, block: { kind: "builtin_call", id: call.id, name: call.name, arguments: call.args } };
      const result = entry.runs < entry.tool.maxCalls
        ? await runCall(entry.tool, entry.session, call.args, signal)
        : entry.tool.failed(`at most ${entry.tool.maxCalls} calls of ${call.name} may run per response`);
      entry.runs++;
      yield { type: "block_end", index, result };
      assistant.push({ type: "tool_call", id: call.id, name: call.name, arguments: parseArguments(call.args) ?? {} });
      const text = inertPlaceholders(result.text, prepared.model.media);
      results.push({ type: "tool_result", callId: call.id, parts: [{ type: "text", text }], isError: result.status === "failed" });
    }
    if (signal.aborted) {
      yield { type: "finish", reason: "cancelled", stopSequence: null };
      return;
    }
    // The client's own calls end the response (the client runs them); so does the step bound.
    const left = budget === null ? null : budget - total.outputTokens;
    if (s.clientCalls > 0 || step >= maxSteps || (left !== null && left <= 0)) {
      const reason = s.clientCalls > 0 ? "tool_calls" : left !== null && left <= 0 ? "length" : (s.finish?.reason ?? "stop");
      yield { type: "finish", reason, stopSequence: null };
      return;
    }
    const conversation: Conversation = [...request.conversation, { role: "assistant", parts: assistant }, { role: "tool", parts: results }];
    const spent = new Set([...byName.values()].filter((e) => e.runs >= e.tool.maxCalls).map((e) => builtinName(e.tool)));
    const tools = (request.tools ?? []).filter((t) => !spent.has(t.function.name));
    // The call a step had to make was made: the next step may answer in text.
    const toolChoice: ToolChoice = !tools.length || request.toolChoice === "none" ? "none" : "auto";
    try {
      const lane = prepared.lane ? { lane: prepared.lane } : {};
      prepared = { ...(await prepareGeneration(deps, prepared.model, { ...request, conversation, tools: tools.length ? tools : null, toolChoice, maxTokens: left }, prepared.owner)), ...lane };
    } catch (e) {
      yield { type: "error", error: e instanceof ApiError ? e : ApiError.internal() };
      return;
    }
  }
}
