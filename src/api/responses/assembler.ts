// Builds a Responses response from the core's block events, and the stream events that describe each step of it:
// one state machine for streamed and non-streamed answers, so both carry the same items and ids (and storage can
// keep exactly what was streamed).
import type { Sealer } from "../../crypto/sealing.ts";
import type { ApiError } from "../../errors/api-error.ts";
import type { BlockHead, CoreEvent, Usage } from "../../inference/blocks.ts";
import type { BuiltinResult } from "../../inference/builtin-tool.ts";
import type { Logprob } from "../../inference/logprobs.ts";
import { logprobEntries } from "../logprob-entries.ts";
import { type NumberedSource, sourcesOf } from "../../tools/web-search.ts";
import { callIdOf, newFunctionCallItemId, newMessageItemId, newReasoningId } from "./ids.ts";
import type { ResponseEvent } from "./response-event.ts";
import { annotate, builtinItem, searchEnded, searchStarted } from "./web-search-items.ts";

type Json = Record<string, unknown>;
export type { ResponseEvent } from "./response-event.ts";

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

/** Errors that end the stream itself (the instance or its backend), not the response: sent as a top-level `error` event. */
const STREAM_LEVEL = new Set(["server_shutting_down", "backend_unavailable", "service_overloaded"]);

export interface AssemblerOptions {
  id: string;
  model: string;
  createdAt: number;
  /** The request fields every response object echoes (instructions, tools, temperature, …). */
  echo: Json;
  sealer: Sealer;
  includeEncrypted: boolean;
  /** Each output_text carries its tokens' log probabilities (and each text delta those of its tokens). */
  includeLogprobs?: boolean;
  summary: boolean;
  /** A background response starts queued and moves to in_progress when the scheduler starts it. */
  queued?: boolean;
}

interface Open {
  head: BlockHead;
  item: Json;
  outputIndex: number;
  text: string;
  /** Sources of the searches that ended before this text began: what its citations may point at. */
  sources: NumberedSource[];
}

export class ResponseAssembler {
  status: ResponseStatus;
  private readonly output: Json[] = [];
  private usage: Usage | null = null;
  private error: { code: string; message: string } | null = null;
  private incomplete: { reason: string } | null = null;
  private completedAt: number | null = null;
  private open = new Map<number, Open>();
  /** A finished text item whose done event waits for the next block: text before a call is commentary. */
  private pendingMessage: Open | null = null;
  /** Every source the response's searches gave so far, numbered as the model saw them. */
  private sources: NumberedSource[] = [];
  /** Log probabilities of tokens whose text is still to come: they go with the next text delta. */
  private pendingLogprobs: Logprob[] = [];

  constructor(private readonly o: AssemblerOptions) {
    this.status = o.queued ? "queued" : "in_progress";
  }

  get id(): string {
    return this.o.id;
  }

  /** The response object as it stands. */
  response(): Json {
    const u = this.usage;
    return {
      id: this.o.id,
      object: "response",
      created_at: this.o.createdAt,
      status: this.status,
      completed_at: this.completedAt,
      error: this.error,
      incomplete_details: this.incomplete,
      model: this.o.model,
      output: this.output,
      ...this.o.echo,
      usage: u && {
        input_tokens: u.inputTokens,
        input_tokens_details: { cached_tokens: u.cachedTokens },
        output_tokens: u.outputTokens,
        output_tokens_details: { reasoning_tokens: u.reasoningTokens },
        total_tokens: u.inputTokens + u.outputTokens,
      },
    };
  }

  /** The ids of the reasoning items produced so far (a later request may replay one by its id). */
  reasoningIds(): string[] {
    return this.output.filter((item) => item.type === "reasoning").map((item) => String(item.id));
  }

  /** The first events of a stream: created, then in_progress, or queued for a background response not started yet. */
  start(): ResponseEvent[] {
    const created: ResponseEvent = { type: "response.created", response: this.response() };
    return [created, { type: this.status === "queued" ? "response.queued" : "response.in_progress", response: this.response() }];
  }

  /** A queued response was started: its in_progress event. */
  begin(): ResponseEvent[] {
    if (this.status !== "queued") return [];
    this.status = "in_progress";
    return [{ type: "response.in_progress", response: this.response() }];
  }

  /**
   * Ends a stored response that cannot finish (its worker or stream failed outside the model): status failed, with
   * the response.failed event its stored log ends with (live listeners already had the stream-level error).
   */
  abandon(message: string): ResponseEvent[] {
    this.status = "failed";
    this.error = { code: "server_error", message };
    this.completedAt = Math.floor(Date.now() / 1000);
    return [{ type: "response.failed", response: this.response() }];
  }

  push(ev: CoreEvent): ResponseEvent[] {
    const out: ResponseEvent[] = [];
    switch (ev.type) {
      case "block_start":
        this.startBlock(ev.index, ev.block, out);
        break;
      case "block_delta":
        this.delta(this.open.get(ev.index)!, ev.delta, out);
        break;
      case "block_end":
        this.endBlock(this.open.get(ev.index)!, out, ev);
        this.open.delete(ev.index);
        break;
      case "logprobs":
        if (this.o.includeLogprobs) this.pendingLogprobs.push(...ev.logprobs);
        break;
      case "usage":
        this.usage = ev.usage;
        break;
      case "finish":
        // Text the token budget (or a cancel) cut short is an incomplete message.
        this.flushMessage(out, false, ev.reason === "length" || ev.reason === "cancelled");
        if (ev.reason === "cancelled") this.cancel(out);
        else this.finish(ev.reason === "length", out);
        break;
      case "error":
        this.flushMessage(out, false);
        this.fail(ev.error, out);
        break;
    }
    return out;
  }

  private ref(o: Open) {
    return { item_id: o.item.id, output_index: o.outputIndex };
  }

  private startBlock(index: number, head: BlockHead, out: ResponseEvent[]): void {
    this.flushMessage(out, head.kind === "tool_call" || head.kind === "builtin_call");
    let item: Json;
    if (head.kind === "builtin_call") item = builtinItem(head);
    else if (head.kind === "text") item = { id: newMessageItemId(), type: "message", role: "assistant", status: "in_progress", content: [] };
    else if (head.kind === "tool_call") item = { id: newFunctionCallItemId(), type: "function_call", status: "in_progress", call_id: callIdOf(head.id), name: head.name, arguments: "" };
    else item = { id: newReasoningId(), type: "reasoning", summary: [], ...(this.o.summary ? {} : { content: [] }) };
    const o: Open = { head, item, outputIndex: this.output.length, text: "", sources: head.kind === "text" ? [...this.sources] : [] };
    this.output.push(item);
    this.open.set(index, o);
    out.push({ type: "response.output_item.added", output_index: o.outputIndex, item: structuredClone(item) });
    if (head.kind === "builtin_call") {
      out.push(...searchStarted(this.ref(o)));
    } else if (head.kind === "text") {
      const part = { type: "output_text", text: "", annotations: [], ...(this.o.includeLogprobs ? { logprobs: [] } : {}) };
      (item.content as Json[]).push(part);
      out.push({ type: "response.content_part.added", ...this.ref(o), content_index: 0, part: structuredClone(part) });
    } else if (head.kind === "reasoning" && this.o.summary) {
      (item.summary as Json[]).push({ type: "summary_text", text: "" });
      out.push({ type: "response.reasoning_summary_part.added", ...this.ref(o), summary_index: 0, part: { type: "summary_text", text: "" } });
    } else if (head.kind === "reasoning") {
      (item.content as Json[]).push({ type: "reasoning_text", text: "" });
      out.push({ type: "response.content_part.added", ...this.ref(o), content_index: 0, part: { type: "reasoning_text", text: "" } });
    }
  }

  private delta(o: Open, delta: string, out: ResponseEvent[]): void {
    o.text += delta;
    // Only output_text carries log probabilities: a call's tokens' are dropped.
    if (o.head.kind !== "text") this.pendingLogprobs = [];
    if (o.head.kind === "tool_call") {
      o.item.arguments = o.text;
      out.push({ type: "response.function_call_arguments.delta", ...this.ref(o), delta });
      return;
    }
    const part = ((o.head.kind === "reasoning" && this.o.summary ? o.item.summary : o.item.content) as Json[])[0]!;
    part.text = o.text;
    if (o.head.kind === "text") {
      const logprobs = this.takeLogprobs();
      if (this.o.includeLogprobs) (part.logprobs as unknown[]).push(...logprobs);
      out.push({ type: "response.output_text.delta", ...this.ref(o), content_index: 0, delta, logprobs });
    }
    else if (this.o.summary) out.push({ type: "response.reasoning_summary_text.delta", ...this.ref(o), summary_index: 0, delta });
    else out.push({ type: "response.reasoning_text.delta", ...this.ref(o), content_index: 0, delta });
  }

  /** The pending entries in the format's shape, taken (none unless the request included them). */
  private takeLogprobs(): ReturnType<typeof logprobEntries> {
    const taken = logprobEntries(this.pendingLogprobs);
    this.pendingLogprobs = [];
    return taken;
  }

  private endBlock(o: Open, out: ResponseEvent[], end: { cut?: boolean; result?: BuiltinResult }): void {
    if (o.head.kind === "builtin_call") {
      out.push(...searchEnded(o.item, end.result, this.ref(o)));
      this.sources.push(...sourcesOf(end.result));
      out.push({ type: "response.output_item.done", output_index: o.outputIndex, item: structuredClone(o.item) });
      return;
    }
    if (o.head.kind === "text") {
      const part = (o.item.content as Json[])[0]!;
      if (o.sources.length) out.push(...annotate(part, o.text, o.sources, this.ref(o)));
      // The annotations ride along on output_text.done as well, for clients that only read the done events.
      // Tokens that wrote no text (a lone byte, a held-back stop sequence's start) still belong to this text.
      if (this.o.includeLogprobs) (part.logprobs as unknown[]).push(...this.takeLogprobs());
      const logprobs = this.o.includeLogprobs ? structuredClone(part.logprobs) : [];
      out.push({ type: "response.output_text.done", ...this.ref(o), content_index: 0, text: o.text, logprobs, ...(o.sources.length ? { annotations: part.annotations } : {}) });
      out.push({ type: "response.content_part.done", ...this.ref(o), content_index: 0, part: structuredClone(part) });
      this.pendingMessage = o;
      return;
    }
    if (o.head.kind === "tool_call") {
      out.push({ type: "response.function_call_arguments.done", ...this.ref(o), name: o.item.name, arguments: o.text });
    } else if (this.o.summary) {
      out.push({ type: "response.reasoning_summary_text.done", ...this.ref(o), summary_index: 0, text: o.text });
      out.push({ type: "response.reasoning_summary_part.done", ...this.ref(o), summary_index: 0, part: { type: "summary_text", text: o.text } });
    } else {
      out.push({ type: "response.reasoning_text.done", ...this.ref(o), content_index: 0, text: o.text });
      out.push({ type: "response.content_part.done", ...this.ref(o), content_index: 0, part: { type: "reasoning_text", text: o.text } });
    }
    if (o.head.kind === "reasoning" && this.o.includeEncrypted) o.item.encrypted_content = this.o.sealer.seal(o.text, this.o.model);
    // A call the token limit cut keeps the arguments written so far, as an incomplete item.
    if (o.head.kind !== "reasoning") o.item.status = end.cut ? "incomplete" : "completed";
    out.push({ type: "response.output_item.done", output_index: o.outputIndex, item: structuredClone(o.item) });
  }

  /** Emits the waiting message's done event; before a function call its text is commentary. */
  private flushMessage(out: ResponseEvent[], beforeCall: boolean, cut = false): void {
    const o = this.pendingMessage;
    if (!o) return;
    this.pendingMessage = null;
    o.item.status = cut ? "incomplete" : "completed";
    if (beforeCall) o.item.phase = "commentary";
    out.push({ type: "response.output_item.done", output_index: o.outputIndex, item: structuredClone(o.item) });
  }

  /**
   * Output that ends in reasoning (the model stopped, or was cut, while thinking) gets an empty assistant message
   * after it, so the output replays as the next turn's input (input rule 2: reasoning is followed by what it led to).
   */
  private answerReasoning(out: ResponseEvent[], cut: boolean): void {
    if (this.output[this.output.length - 1]?.type !== "reasoning") return;
    const part = { type: "output_text", text: "", annotations: [] };
    const item: Json = { id: newMessageItemId(), type: "message", role: "assistant", status: "in_progress", content: [] };
    const ref = { item_id: item.id, output_index: this.output.length };
    this.output.push(item);
    out.push({ type: "response.output_item.added", output_index: ref.output_index, item: structuredClone(item) });
    (item.content as Json[]).push(structuredClone(part));
    out.push({ type: "response.content_part.added", ...ref, content_index: 0, part: structuredClone(part) });
    out.push({ type: "response.output_text.done", ...ref, content_index: 0, text: "", logprobs: [] });
    out.push({ type: "response.content_part.done", ...ref, content_index: 0, part: structuredClone(part) });
    item.status = cut ? "incomplete" : "completed";
    out.push({ type: "response.output_item.done", output_index: ref.output_index, item: structuredClone(item) });
  }

  private finish(cut: boolean, out: ResponseEvent[]): void {
    // A block still open was cut by the token budget: it ends incomplete.
    for (const o of this.open.values()) if (o.head.kind !== "reasoning") o.item.status = "incomplete";
    this.answerReasoning(out, cut);
    this.status = cut ? "incomplete" : "completed";
    if (cut) this.incomplete = { reason: "max_output_tokens" };
    this.completedAt = Math.floor(Date.now() / 1000);
    out.push({ type: cut ? "response.incomplete" : "response.completed", response: this.response() });
  }

  /**
   * Stopped on request (a cancelled background response, or a stored stream whose client left). The stream ends with
   * response.incomplete whose response says cancelled: the official clients know no response.cancelled event (their
   * stream helpers throw on it), and a cancelled response did end with its output cut short.
   */
  private cancel(out: ResponseEvent[]): void {
    for (const o of this.open.values()) if (o.head.kind !== "reasoning") o.item.status = "incomplete";
    this.answerReasoning(out, true);
    this.status = "cancelled";
    this.completedAt = Math.floor(Date.now() / 1000);
    out.push({ type: "response.incomplete", response: this.response() });
  }

  private fail(error: ApiError, out: ResponseEvent[]): void {
    if (error.code && STREAM_LEVEL.has(error.code)) {
      out.push({ type: "error", code: error.code, message: error.message, param: error.param });
      return;
    }
    this.status = "failed";
    this.error = { code: "server_error", message: error.message };
    out.push({ type: "response.failed", response: this.response() });
  }
}
