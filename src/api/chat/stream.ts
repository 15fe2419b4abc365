// Encodes the core's block events as Chat Completions stream chunks (`data: {chunk}` frames ending with `data: [DONE]`).
import type { BlockHead, CoreEvent, Usage } from "../../inference/blocks.ts";
import type { Logprob } from "../../inference/logprobs.ts";
import { chatFinishReason, chatLogprobs, SYSTEM_FINGERPRINT } from "./finish.ts";
import { chatCallId } from "./ids.ts";

export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  /** The lane it runs in, as the answer echoes it. */
  service_tier: "default" | "flex" | "priority";
  includeUsage: boolean;
}

type Delta = Record<string, unknown>;

interface ChoiceState {
  /** Each open block's kind, and for tool calls their position among the choice's calls. */
  blocks: Map<number, { kind: BlockHead["kind"]; call: number }>;
  calls: number;
  /** Log probabilities of tokens whose text has not gone out yet: they ride on the choice's next delta chunk. */
  pending: Logprob[] | null;
}

export class ChatChunkEncoder {
  private choices = new Map<number, ChoiceState>();

  constructor(private readonly head: ChunkHead) {}

  private base() {
    const { id, created, model, service_tier } = this.head;
    return { id, object: "chat.completion.chunk" as const, created, model, service_tier, system_fingerprint: SYSTEM_FINGERPRINT };
  }

  private chunk(index: number, delta: Delta, finish: string | null = null, logprobs: Logprob[] | null = null) {
    return {
      ...this.base(),
      choices: [{ index, delta, logprobs: logprobs && chatLogprobs(logprobs), finish_reason: finish }],
      ...(this.head.includeUsage ? { usage: null } : {}),
    };
  }

  /** Chunks for one event of choice `index` (the first event of a choice also opens it with the role). */
  encode(index: number, ev: CoreEvent): object[] {
    const out: object[] = [];
    let st = this.choices.get(index);
    if (!st) {
      st = { blocks: new Map(), calls: 0, pending: null };
      this.choices.set(index, st);
      out.push(this.chunk(index, { role: "assistant", content: "" }));
    }
    switch (ev.type) {
      case "block_start": {
        const call = ev.block.kind === "tool_call" ? st.calls++ : -1;
        st.blocks.set(ev.index, { kind: ev.block.kind, call });
        if (ev.block.kind === "tool_call") {
          out.push(this.chunk(index, { tool_calls: [{ index: call, id: chatCallId(ev.block.id), type: "function", function: { name: ev.block.name, arguments: "" } }] }));
        }
        break;
      }
      case "block_delta": {
        const b = st.blocks.get(ev.index);
        const delta: Delta | null =
          b?.kind === "text" ? { content: ev.delta }
          : b?.kind === "reasoning" ? { reasoning_content: ev.delta }
          : b?.kind === "tool_call" ? { tool_calls: [{ index: b.call, function: { arguments: ev.delta } }] }
          : null;
        if (delta) out.push(this.chunk(index, delta, null, this.takePending(st, b?.kind !== "reasoning")));
        break;
      }
      case "logprobs":
        (st.pending ??= []).push(...ev.logprobs);
        break;
      case "finish": {
        // Tokens that wrote no text (a held-back stop sequence's start, a lone byte) still get their chunk.
        const rest = this.takePending(st, true);
        if (rest) out.push(this.chunk(index, {}, null, rest));
        out.push(this.chunk(index, {}, chatFinishReason(ev.reason)));
        break;
      }
    }
    return out;
  }

  private takePending(st: ChoiceState, now: boolean): Logprob[] | null {
    if (!now || !st.pending) return null;
    const taken = st.pending;
    st.pending = null;
    return taken;
  }

  /** The last chunk before [DONE] when stream_options.include_usage is set. */
  usage(u: Usage) {
    return {
      ...this.base(),
      choices: [],
      usage: chatUsage(u),
    };
  }
}

/** The format's usage object: prompt_tokens_details.cached_tokens is always there (0 when nothing came from the cache). */
export function chatUsage(u: Usage) {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    ...(u.reasoningTokens ? { completion_tokens_details: { reasoning_tokens: u.reasoningTokens } } : {}),
  };
}
