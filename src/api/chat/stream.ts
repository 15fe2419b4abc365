// Encodes core events as Chat Completions stream chunks (`data: {chunk}` frames ending with `data: [DONE]`).
import type { CoreEvent } from "../../inference/events.ts";

export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
}

type Delta = Record<string, unknown>;

export class ChatChunkEncoder {
  private started = new Set<number>();

  constructor(private readonly head: ChunkHead) {}

  get includeUsage(): boolean {
    return this.head.includeUsage;
  }

  private base() {
    return { id: this.head.id, object: "chat.completion.chunk" as const, created: this.head.created, model: this.head.model, system_fingerprint: "kiln" };
  }

  private chunk(index: number, delta: Delta, finish: string | null = null) {
    return {
      ...this.base(),
      choices: [{ index, delta, logprobs: null, finish_reason: finish }],
      ...(this.head.includeUsage ? { usage: null } : {}),
    };
  }

  /** Chunks for one event of choice `index` (the first event of a choice also opens it with the role). */
  encode(index: number, ev: CoreEvent): object[] {
    const out: object[] = [];
    if (!this.started.has(index)) {
      this.started.add(index);
      out.push(this.chunk(index, { role: "assistant", content: "" }));
    }
    switch (ev.type) {
      case "text":
        out.push(this.chunk(index, { content: ev.text }));
        break;
      case "reasoning":
        out.push(this.chunk(index, { reasoning_content: ev.text }));
        break;
      case "tool_call_start":
        out.push(this.chunk(index, { tool_calls: [{ index: ev.index, id: ev.id, type: "function", function: { name: ev.name, arguments: "" } }] }));
        break;
      case "tool_call_delta":
        out.push(this.chunk(index, { tool_calls: [{ index: ev.index, function: { arguments: ev.arguments } }] }));
        break;
      case "finish":
        out.push(this.chunk(index, {}, ev.reason === "cancelled" ? "stop" : ev.reason));
        break;
    }
    return out;
  }

  /** The last chunk before [DONE] when stream_options.include_usage is set. */
  usage(prompt: number, completion: number) {
    return {
      ...this.base(),
      choices: [],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
  }
}

export function sseData(payload: object | string): string {
  return `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}
