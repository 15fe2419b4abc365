// Streaming clients for load scenarios (Chat Completions and Responses): each records when every content chunk
// arrives and the usage it ends with.
import type { StreamTiming } from "./metrics.ts";

/** POSTs a streaming request and hands each SSE `data:` payload to `onData` with its arrival time (ms since t0). */
async function readStream(url: string, key: string, body: unknown, t0: number, onData: (data: string, nowMs: number) => void): Promise<void> {
  const res = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
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

export async function streamChat(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming> {
  const t0 = performance.now();
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
  await readStream(`${baseUrl}/v1/chat/completions`, key, { ...body, stream: true, stream_options: { include_usage: true } }, t0, (data, now) => {
    if (data === "[DONE]") return;
    const chunk = JSON.parse(data);
    if (chunk.error) throw new Error(`stream error: ${chunk.error.message}`);
    if (chunk.usage) outputTokens = chunk.usage.completion_tokens;
    const delta = chunk.choices?.[0]?.delta;
    if (delta?.content || delta?.reasoning_content || delta?.tool_calls) chunkTimesMs.push(now);
  });
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens };
}

const DELTAS = new Set(["response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta"]);

/** A streamed Responses request; also returns the response's id and final status (its stream must end cleanly). */
export async function streamResponse(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming & { id: string; status: string }> {
  const t0 = performance.now();
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
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
    }
  });
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens, id, status };
}
