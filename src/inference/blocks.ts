// Block-structured generation events: the core yields ordered blocks (reasoning, text, tool call) with explicit start
// and end and an index, so "reasoning, then a call, then text" is kept in order; every family only encodes them.
import type { ApiError } from "../errors/api-error.ts";
import type { BuiltinResult } from "./builtin-tool.ts";
import type { Logprob, PromptLogprob } from "./logprobs.ts";

/** Why a choice ended, as every family sees it (the worker's own reasons are mapped onto these). */
export type FinishReason = "stop" | "length" | "tool_calls" | "cancelled";

/**
 * A builtin_call block is a call of a tool kiln ran itself (builtin-tool.ts): it starts with the model's arguments
 * and ends with the result. Only a request with built-in tools ever sees one.
 */
export type BlockHead =
  | { kind: "text" }
  | { kind: "reasoning" }
  | { kind: "tool_call"; id: string; name: string }
  | { kind: "builtin_call"; id: string; name: string; arguments: string };

export interface Usage {
  inputTokens: number;
  /** Every generated token, reasoning included. */
  outputTokens: number;
  reasoningTokens: number;
  /** Of inputTokens, those whose KV came from the worker's prefix cache (billed at the cached-input rate). */
  cachedTokens: number;
}

export type CoreEvent =
  | { type: "block_start"; index: number; block: BlockHead }
  /** Text of a text or reasoning block, or a piece of a tool call's JSON arguments. */
  | { type: "block_delta"; index: number; delta: string }
  /** `cut`: a tool call the output ended inside; `result` ends a builtin_call block. */
  | { type: "block_end"; index: number; cut?: boolean; result?: BuiltinResult }
  /** The log probabilities of the answer tokens whose text the next block deltas carry (only when the request asked). */
  | { type: "logprobs"; logprobs: Logprob[] }
  /** The prompt tokens' log probabilities, in prompt order, before any output (only when the request asked). */
  | { type: "prompt_logprobs"; logprobs: PromptLogprob[] }
  | { type: "usage"; usage: Usage }
  | { type: "finish"; reason: FinishReason; stopSequence: string | null }
  | { type: "error"; error: ApiError };

/** What the output parser finds in the raw text, before it is framed into blocks. */
export type ParsedEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call_start"; id: string; name: string }
  | { type: "tool_call_delta"; arguments: string }
  /** `cut`: the output ended inside the call (a token limit), so its arguments are a prefix of what was meant. */
  | { type: "tool_call_end"; cut?: boolean };

/** Frames parsed events into blocks: a block opens at the first piece of a new kind and closes when another begins. */
export class BlockFramer {
  private open: { index: number; kind: BlockHead["kind"] } | null = null;
  private next = 0;

  push(ev: ParsedEvent): CoreEvent[] {
    const out: CoreEvent[] = [];
    if (ev.type === "tool_call_start") {
      this.close(out);
      this.start(out, { kind: "tool_call", id: ev.id, name: ev.name });
    } else if (ev.type === "tool_call_delta") {
      if (this.open?.kind === "tool_call" && ev.arguments) out.push({ type: "block_delta", index: this.open.index, delta: ev.arguments });
    } else if (ev.type === "tool_call_end") {
      this.close(out, ev.cut);
    } else if (ev.text) {
      const kind = ev.type;
      if (this.open?.kind !== kind) {
        this.close(out);
        this.start(out, { kind });
      }
      out.push({ type: "block_delta", index: this.open!.index, delta: ev.text });
    }
    return out;
  }

  /** Closes the open block, if any (at the end of the choice). */
  end(): CoreEvent[] {
    const out: CoreEvent[] = [];
    this.close(out);
    return out;
  }

  /** Number of blocks opened so far. */
  get count(): number {
    return this.next;
  }

  private start(out: CoreEvent[], block: BlockHead): void {
    this.open = { index: this.next++, kind: block.kind };
    out.push({ type: "block_start", index: this.open.index, block });
  }

  private close(out: CoreEvent[], cut?: boolean): void {
    if (!this.open) return;
    out.push({ type: "block_end", index: this.open.index, ...(cut ? { cut } : {}) });
    this.open = null;
  }
}

export type Block =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string }
  /** `cut`: the output ended inside the call, so `arguments` is only its beginning. */
  | { kind: "tool_call"; id: string; name: string; arguments: string; cut?: boolean }
  | { kind: "builtin_call"; id: string; name: string; arguments: string; result: BuiltinResult | null };

/** A whole choice: the ordered blocks, how it ended, and its usage (for non-streaming answers and storage). */
export interface ChoiceResult {
  blocks: Block[];
  finish: FinishReason;
  stopSequence: string | null;
  usage: Usage;
  /** The answer tokens' log probabilities, when the request asked for them. */
  logprobs?: Logprob[];
  /** The prompt tokens' log probabilities, when the request asked for them (legacy completions' echo). */
  promptLogprobs?: PromptLogprob[];
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 });

/** Folds one event into a result being built; throws the error of an error event. */
export function foldEvent(r: ChoiceResult, ev: CoreEvent): void {
  switch (ev.type) {
    case "block_start": {
      const h = ev.block;
      r.blocks[ev.index] =
        h.kind === "tool_call" ? { ...h, arguments: "" }
        : h.kind === "builtin_call" ? { ...h, result: null }
        : { kind: h.kind, text: "" };
      break;
    }
    case "block_delta": {
      const b = r.blocks[ev.index]!;
      if (b.kind === "tool_call") b.arguments += ev.delta;
      else if (b.kind !== "builtin_call") b.text += ev.delta;
      break;
    }
    case "block_end": {
      const b = r.blocks[ev.index];
      if (b?.kind === "builtin_call" && ev.result) b.result = ev.result;
      if (b?.kind === "tool_call" && ev.cut) b.cut = true;
      break;
    }
    case "logprobs":
      (r.logprobs ??= []).push(...ev.logprobs);
      break;
    case "prompt_logprobs":
      (r.promptLogprobs ??= []).push(...ev.logprobs);
      break;
    case "usage":
      r.usage = ev.usage;
      break;
    case "finish":
      r.finish = ev.reason;
      r.stopSequence = ev.stopSequence;
      break;
    case "error":
      throw ev.error;
  }
}

export async function collectChoice(events: AsyncIterable<CoreEvent>): Promise<ChoiceResult> {
  const r: ChoiceResult = { blocks: [], finish: "stop", stopSequence: null, usage: emptyUsage() };
  for await (const ev of events) foldEvent(r, ev);
  return r;
}

/** The text of every block of one kind, joined (for formats that carry the answer and the reasoning as one string each). */
export function joinedText(blocks: readonly Block[], kind: "text" | "reasoning"): string {
  let s = "";
  for (const b of blocks) if (b.kind === kind) s += b.text;
  return s;
}

export function toolCalls(blocks: readonly Block[]): Extract<Block, { kind: "tool_call" }>[] {
  return blocks.filter((b): b is Extract<Block, { kind: "tool_call" }> => b.kind === "tool_call");
}
