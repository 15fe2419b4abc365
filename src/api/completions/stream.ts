// Encodes the core's events as legacy completions stream chunks (`data: {text_completion}` frames ending with
// `data: [DONE]`), the echoed prompt first, each chunk's logprobs with the text they spell.
import type { CoreEvent, FinishReason, Usage } from "../../inference/blocks.ts";
import type { Logprob, PromptLogprob } from "../../inference/logprobs.ts";
import { SYSTEM_FINGERPRINT } from "../chat/finish.ts";
import { legacyLogprobs } from "./legacy-logprobs.ts";

export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  /** Whether the request asked for logprobs: then every chunk carries an object, else null. */
  logprobs: boolean;
  /** Each choice's echoed prompt ("" without echo), by choice index. */
  echoes: string[];
}

interface ChoiceState {
  /** Where the next text starts in the choice's text (for text_offset). */
  offset: number;
  pending: Logprob[];
  /** The prompt's entries (echo with logprobs), held until the echo chunk carries them. */
  prompt: PromptLogprob[];
  echoed: boolean;
}

/** The legacy finish reason: a choice stopped early (its client left, the time limit) reads as "stop". */
export const completionFinish = (reason: FinishReason): "stop" | "length" => (reason === "length" ? "length" : "stop");

/** The format's usage object, with chat's prompt_tokens_details.cached_tokens (0 when nothing came from the cache). */
export const completionUsage = (u: Usage) => ({
  prompt_tokens: u.inputTokens,
  completion_tokens: u.outputTokens,
  total_tokens: u.inputTokens + u.outputTokens,
  prompt_tokens_details: { cached_tokens: u.cachedTokens },
});

export class CompletionChunkEncoder {
  private choices = new Map<number, ChoiceState>();

  constructor(private readonly head: ChunkHead) {}

  private chunk(index: number, text: string, finish: "stop" | "length" | null, logprobs: Logprob[] = [], prompt: PromptLogprob[] = []) {
    const st = this.choices.get(index)!;
    const lp = this.head.logprobs ? legacyLogprobs(logprobs, st.offset, prompt) : null;
    st.offset += text.length;
    return {
      id: this.head.id, object: "text_completion" as const, created: this.head.created, model: this.head.model, system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index, text, logprobs: lp, finish_reason: finish }],
      ...(this.head.includeUsage ? { usage: null } : {}),
    };
  }

  /**
   * Chunks for one event of choice `index`. Its first event after the prompt's entries (which come first, when the
   * prompt is scored) sends the echoed prompt, if any, with those entries.
   */
  encode(index: number, ev: CoreEvent): object[] {
    const out: object[] = [];
    if (!this.choices.has(index)) this.choices.set(index, { offset: 0, pending: [], prompt: [], echoed: false });
    const st = this.choices.get(index)!;
    if (ev.type === "prompt_logprobs") {
      st.prompt.push(...ev.logprobs);
      return out;
    }
    if (!st.echoed) {
      st.echoed = true;
      const echo = this.head.echoes[index] ?? "";
      if (echo || st.prompt.length) out.push(this.chunk(index, echo, null, [], st.prompt.splice(0)));
    }
    if (ev.type === "logprobs") st.pending.push(...ev.logprobs);
    if (ev.type === "block_delta") out.push(this.chunk(index, ev.delta, null, st.pending.splice(0)));
    if (ev.type === "finish") {
      // Tokens that wrote no text (a held-back stop sequence's start, a lone byte) still get their entries.
      if (st.pending.length) out.push(this.chunk(index, "", null, st.pending.splice(0)));
      out.push(this.chunk(index, "", completionFinish(ev.reason)));
    }
    return out;
  }

  /** The last chunk before [DONE] when stream_options.include_usage is set. */
  usage(u: Usage) {
    return { id: this.head.id, object: "text_completion" as const, created: this.head.created, model: this.head.model, system_fingerprint: SYSTEM_FINGERPRINT, choices: [], usage: completionUsage(u) };
  }
}
