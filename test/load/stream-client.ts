// Streaming clients for load scenarios (Chat Completions, Responses and Messages): each records when every content
// chunk arrives and the usage it ends with (cached prompt tokens where the server reports them).
import type { StreamTiming } from "./metrics.ts";

/** POSTs a streaming request and hands each SSE `data:` payload to `onData` with its arrival time (ms since t0). */
async function readStream(url: string, key: string, body: unknown, t0: number, onData: (data: string, nowMs: number) => void): Promise<void> {
  // Bearer works for every family (Messages takes x-api-key too). No idle timeout: a stream queued behind long prompts
  // on a busy box stayed silent past Bun's 5-minute default (the prefix bench's shared prompt, cache off), and its
  // TTFT is the figure being measured.
  const res = await fetch(url, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body), timeout: false,
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const bytes of res.body) {
    const now = performance.now() - t0;
    buffered += decoder.decode(bytes, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf("\n\n")) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = frame.split("\n").find((l) => l.startsWith("data: "));
      if (data) onData(data.slice(6), now);
    }
  }
}

/** What a stream says of its prompt: `cachedTokens` undefined when the server does not report it. */
export interface PromptUsage {
  cachedTokens?: number;
}

export async function streamChat(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming & PromptUsage> {
  const t0 = performance.now();
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
  let cachedTokens: number | undefined;
  await readStream(`${baseUrl}/v1/chat/completions`, key, { ...body, stream: true, stream_options: { include_usage: true } }, t0, (data, now) => {
    if (data === "[DONE]") return;
    const chunk = JSON.parse(data);
    if (chunk.error) throw new Error(`stream error: ${chunk.error.message}`);
    if (chunk.usage) {
      outputTokens = chunk.usage.completion_tokens;
      cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? cachedTokens;
    }
    const delta = chunk.choices?.[0]?.delta;
    if (delta?.content || delta?.reasoning_content || delta?.tool_calls) chunkTimesMs.push(now);
  });
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens, cachedTokens };
}

const DELTAS = new Set(["response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta"]);

/** A streamed Responses request; also returns the response's id and final status (its stream must end cleanly). */
export async function streamResponse(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming & PromptUsage & { id: string; status: string }> {
  const t0 = performance.now();
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
  let cachedTokens: number | undefined;
  let id = "";
  let status = "";
  await readStream(`${baseUrl}/v1/responses`, key, { ...body, stream: true }, t0, (data, now) => {
    const ev = JSON.parse(data);
    if (ev.type === "error" || ev.type === "response.failed") throw new Error(`stream error: ${data}`);
    if (DELTAS.has(ev.type)) chunkTimesMs.push(now);
    if (ev.response) {
      id = ev.response.id;
      status = ev.response.status;
      outputTokens = ev.response.usage?.output_tokens ?? outputTokens;
      cachedTokens = ev.response.usage?.input_tokens_details?.cached_tokens ?? cachedTokens;
    }
  });
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens, cachedTokens, id, status };
}

/**
 * A streamed Messages request; also returns the reply's text (to send back as history) and its stop reason. Cached
 * tokens are `cache_read_input_tokens`, read from message_start and, where the server sends usage there, message_delta.
 */
export async function streamMessages(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming & PromptUsage & { text: string; stopReason: string }> {
  const t0 = performance.now();
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
  let cachedTokens: number | undefined;
  let text = "";
  let stopReason = "";
  await readStream(`${baseUrl}/v1/messages`, key, { ...body, stream: true }, t0, (data, now) => {
    const ev = JSON.parse(data);
    if (ev.type === "error") throw new Error(`stream error: ${data}`);
    const usage = ev.type === "message_start" ? ev.message?.usage : ev.type === "message_delta" ? ev.usage : undefined;
    if (usage) {
      outputTokens = usage.output_tokens ?? outputTokens;
      cachedTokens = usage.cache_read_input_tokens ?? cachedTokens;
    }
    if (ev.type === "message_delta") stopReason = ev.delta?.stop_reason ?? stopReason;
    if (ev.type === "content_block_delta") {
      chunkTimesMs.push(now);
      if (ev.delta?.type === "text_delta") text += ev.delta.text;
    }
  });
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens, cachedTokens, text, stopReason };
}
