// Format-neutral generation events: the core yields these; each API family only encodes them.
import type { ApiError } from "../errors/api-error.ts";

export type FinishReason = "stop" | "length" | "tool_calls" | "cancelled";

export type CoreEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; arguments: string }
  | { type: "tool_call_end"; index: number }
  | { type: "usage"; inputTokens: number; outputTokens: number }
  | { type: "finish"; reason: FinishReason; stopSequence: string | null }
  | { type: "error"; error: ApiError };

/** What a whole choice adds up to, for non-streaming responses and for storage. */
export interface ChoiceResult {
  text: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finish: FinishReason;
  stopSequence: string | null;
  inputTokens: number;
  outputTokens: number;
}

export async function collectChoice(events: AsyncIterable<CoreEvent>): Promise<ChoiceResult> {
  const r: ChoiceResult = { text: "", reasoning: "", toolCalls: [], finish: "stop", stopSequence: null, inputTokens: 0, outputTokens: 0 };
  for await (const ev of events) {
    switch (ev.type) {
      case "text":
        r.text += ev.text;
        break;
      case "reasoning":
        r.reasoning += ev.text;
        break;
      case "tool_call_start":
        r.toolCalls[ev.index] = { id: ev.id, name: ev.name, arguments: "" };
        break;
      case "tool_call_delta":
        r.toolCalls[ev.index]!.arguments += ev.arguments;
        break;
      case "usage":
        r.inputTokens = ev.inputTokens;
        r.outputTokens = ev.outputTokens;
        break;
      case "finish":
        r.finish = ev.reason;
        r.stopSequence = ev.stopSequence;
        break;
      case "error":
        throw ev.error;
    }
  }
  return r;
}
