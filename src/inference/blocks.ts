// Block-structured generation events: the core yields ordered blocks (reasoning, text, tool call) with explicit start
// and end and an index, so "reasoning, then a call, then text" is kept in order; every family only encodes them.
import type { ApiError } from "../errors/api-error.ts";
import type { NumberedSource } from "../tools/web-search.ts";

/** Why a choice ended, as every family sees it (the worker's own reasons are mapped onto these). */
export type FinishReason = "stop" | "length" | "tool_calls" | "cancelled";

/**
 * A web_search_call block is a search kiln ran itself (src/inference/tool-loop.ts): it starts with the model's
 * query and ends with the search's outcome. Only a request with built-in tools (Responses) ever sees one.
 */
export type BlockHead =
  | { kind: "text" }
  | { kind: "reasoning" }
  | { kind: "tool_call"; id: string; name: string }
  | { kind: "web_search_call"; id: string; name: string; query: string };

/** How a search ended: the sources it gave (numbered across the response), or why it failed. */
export type SearchOutcome = { status: "completed"; sources: NumberedSource[] } | { status: "failed"; reason: string };

export interface Usage {
  inputTokens: number;
  /** Every generated token, reasoning included. */
  outputTokens: number;
  reasoningTokens: number;
  /** Prompt tokens served from a cache (kiln has none yet, so 0). */
  cachedTokens: number;
}

export type CoreEvent =
  | { type: "block_start"; index: number; block: BlockHead }
  /** Text of a text or reasoning block, or a piece of a tool call's JSON arguments. */
  | { type: "block_delta"; index: number; delta: string }
  /** `search` is set on the end of a web_search_call block. */
  | { type: "block_end"; index: number; search?: SearchOutcome }
  | { type: "usage"; usage: Usage }
  | { type: "finish"; reason: FinishReason; stopSequence: string | null }
  | { type: "error"; error: ApiError };

/** What the output parser finds in the raw text, before it is framed into blocks. */
export type ParsedEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call_start"; id: string; name: string }
  | { type: "tool_call_delta"; arguments: string }
  | { type: "tool_call_end" };

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
      this.close(out);
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

  private close(out: CoreEvent[]): void {
    if (!this.open) return;
    out.push({ type: "block_end", index: this.open.index });
    this.open = null;
  }
}

export type Block =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string }
  | { kind: "tool_call"; id: string; name: string; arguments: string }
  | { kind: "web_search_call"; id: string; query: string; outcome: SearchOutcome | null };

/** A whole choice: the ordered blocks, how it ended, and its usage (for non-streaming answers and storage). */
export interface ChoiceResult {
  blocks: Block[];
  finish: FinishReason;
  stopSequence: string | null;
  usage: Usage;
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 });

/** Folds one event into a result being built; throws the error of an error event. */
export function foldEvent(r: ChoiceResult, ev: CoreEvent): void {
  switch (ev.type) {
    case "block_start": {
      const h = ev.block;
      r.blocks[ev.index] =
        h.kind === "tool_call" ? { ...h, arguments: "" }
        : h.kind === "web_search_call" ? { kind: h.kind, id: h.id, query: h.query, outcome: null }
        : { kind: h.kind, text: "" };
      break;
    }
    case "block_delta": {
      const b = r.blocks[ev.index]!;
      if (b.kind === "tool_call") b.arguments += ev.delta;
      else if (b.kind !== "web_search_call") b.text += ev.delta;
      break;
    }
    case "block_end": {
      const b = r.blocks[ev.index];
      if (b?.kind === "web_search_call" && ev.search) b.outcome = ev.search;
      break;
    }
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

/** The text of every block of one kind, joined (chat's `content` and `reasoning_content`). */
export function joinedText(blocks: readonly Block[], kind: "text" | "reasoning"): string {
  let s = "";
  for (const b of blocks) if (b.kind === kind) s += b.text;
  return s;
}

export function toolCalls(blocks: readonly Block[]): Extract<Block, { kind: "tool_call" }>[] {
  return blocks.filter((b): b is Extract<Block, { kind: "tool_call" }> => b.kind === "tool_call");
}
