// Builds a Messages answer from the core's block events, and the stream events that describe it (message_start,
// content_block_start/delta/stop per block, message_delta, message_stop): one state machine for both forms.
import type { Sealer } from "../../crypto/sealing.ts";
import type { ApiError } from "../../errors/api-error.ts";
import type { BlockHead, CoreEvent, FinishReason, Usage } from "../../inference/blocks.ts";
import { type ContextOverflow, ContextLengthError } from "../../inference/context.ts";
import { toolUseId } from "./ids.ts";
import { toolInput } from "./tool-input.ts";

type Json = Record<string, unknown>;
export type MessagesEvent = Json & { type: string };

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export function stopReason(reason: FinishReason, stopSequence: string | null): StopReason {
  if (reason === "length") return "max_tokens";
  if (reason === "tool_calls") return "tool_use";
  return stopSequence !== null ? "stop_sequence" : "end_turn";
}

/** Anthropic's error types, by HTTP status (its clients and tools branch on them); other 5xx are api_error. */
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error", 404: "not_found_error",
  408: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error",
};

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/**
 * The context 400 in Anthropic's wording, the one its clients parse to shrink max_tokens and retry (Claude Code
 * gives up on any other); it states the same three figures as the spec's message.
 */
export function contextLimitMessage(o: ContextOverflow): string {
  return `input length and \`max_tokens\` exceed context limit: ${o.inputTokens} + ${o.requestedOutput} > ${o.contextLength}, decrease input length or \`max_tokens\` and try again`;
}

/**
 * The error object of this format: `{type: "error", error: {type, message}}` with Anthropic's error type; the spec's
 * `code` (server_shutting_down, model_not_found, …) and `param` ride along inside `error`.
 */
export function messagesErrorBody(e: ApiError): Json {
  const { error } = e.toBody();
  const message = e instanceof ContextLengthError ? contextLimitMessage(e.overflow) : error.message;
  return { type: "error", error: { ...error, message, type: anthropicErrorType(e.status) } };
}

/**
 * The format's usage, with Anthropic's meaning of the cache fields: `input_tokens` are the prompt tokens NOT read from
 * the cache, `cache_read_input_tokens` those that were; kiln caches prefixes by itself and charges nothing for writing
 * them, so `cache_creation_input_tokens` is 0.
 */
export function messagesUsage(u: Pick<Usage, "inputTokens" | "cachedTokens" | "outputTokens">) {
  return { input_tokens: u.inputTokens - u.cachedTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cachedTokens, output_tokens: u.outputTokens };
}

interface Open {
  head: BlockHead;
  text: string;
}

export class MessageAssembler {
  private readonly content: Json[] = [];
  private readonly open = new Map<number, Open>();
  private stop: { reason: StopReason; sequence: string | null } | null = null;
  /** Until the core's count arrives (message_start goes out before the prefill): the whole prompt, none of it cached. */
  private usage: Pick<Usage, "inputTokens" | "cachedTokens" | "outputTokens">;

  /** `tier`: the lane it runs in, as the message's usage names it. */
  constructor(private readonly o: { id: string; model: string; inputTokens: number; sealer: Sealer; tier: "standard" | "priority" | "batch" }) {
    this.usage = { inputTokens: o.inputTokens, cachedTokens: 0, outputTokens: 0 };
  }

  message(): Json {
    return {
      id: this.o.id,
      type: "message",
      role: "assistant",
      model: this.o.model,
      content: this.content,
      stop_reason: this.stop?.reason ?? null,
      stop_sequence: this.stop?.sequence ?? null,
      usage: { ...messagesUsage(this.usage), service_tier: this.o.tier },
    };
  }

  start(): MessagesEvent[] {
    return [{ type: "message_start", message: this.message() }];
  }

  push(ev: CoreEvent): MessagesEvent[] {
    switch (ev.type) {
      case "block_start":
        return this.startBlock(ev.index, ev.block);
      case "block_delta":
        return this.delta(ev.index, ev.delta);
      case "block_end":
        return this.endBlock(ev.index);
      case "usage":
        this.usage = ev.usage;
        return [];
      case "logprobs":
      case "prompt_logprobs":
        // The format has no field for them (and Messages never asks for them).
        return [];
      case "finish":
        this.stop = { reason: stopReason(ev.reason, ev.stopSequence), sequence: ev.stopSequence };
        return [
          // The final counts, the cache split included: the format's clients take each of them from here.
          { type: "message_delta", delta: { stop_reason: this.stop.reason, stop_sequence: this.stop.sequence }, usage: messagesUsage(this.usage) },
          { type: "message_stop" },
        ];
      case "error":
        return [messagesErrorBody(ev.error) as MessagesEvent];
    }
  }

  private startBlock(index: number, head: BlockHead): MessagesEvent[] {
    this.open.set(index, { head, text: "" });
    const block: Json =
      head.kind === "text" ? { type: "text", text: "" }
      : head.kind === "reasoning" ? { type: "thinking", thinking: "", signature: "" }
      : { type: "tool_use", id: toolUseId(head.id), name: head.name, input: {} };
    this.content[index] = block;
    return [{ type: "content_block_start", index, content_block: structuredClone(block) }];
  }

  private delta(index: number, delta: string): MessagesEvent[] {
    const o = this.open.get(index)!;
    o.text += delta;
    const block = this.content[index]!;
    if (o.head.kind === "text") {
      block.text = o.text;
      return [{ type: "content_block_delta", index, delta: { type: "text_delta", text: delta } }];
    }
    if (o.head.kind === "reasoning") {
      block.thinking = o.text;
      return [{ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: delta } }];
    }
    // A call's arguments are sent whole at its end, once it is known whether they are exact JSON.
    return [];
  }

  private endBlock(index: number): MessagesEvent[] {
    const o = this.open.get(index)!;
    this.open.delete(index);
    const block = this.content[index]!;
    const out: MessagesEvent[] = [];
    if (o.head.kind === "reasoning") {
      // The signature lets kiln trust this thinking when the client sends it back in a later turn.
      block.signature = this.o.sealer.sign(o.text, this.o.model);
      out.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (o.head.kind === "tool_call") {
      // Arguments that are not a JSON object (a call cut by max_tokens) are sent as the object they begin, so the
      // streamed buffer and the block's input agree and parse.
      const { input, exact } = toolInput(o.text);
      block.input = input;
      out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: exact && o.text.trim() ? o.text : JSON.stringify(input) } });
    }
    out.push({ type: "content_block_stop", index });
    return out;
  }
}
