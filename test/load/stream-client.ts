// One streaming chat client for load scenarios: records when each content chunk arrives and the usage it ends with.
import type { StreamTiming } from "./metrics.ts";

export async function streamChat(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const chunkTimesMs: number[] = [];
  let outputTokens = 0;
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const bytes of res.body) {
    const now = performance.now() - t0;
    buffered += decoder.decode(bytes, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf("\n\n")) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = frame.replace(/^data: /, "");
      if (data === "[DONE]") continue;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(`stream error: ${chunk.error.message}`);
      if (chunk.usage) outputTokens = chunk.usage.completion_tokens;
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.content || delta?.reasoning_content || delta?.tool_calls) chunkTimesMs.push(now);
    }
  }
  const e2eMs = performance.now() - t0;
  return { ttftMs: chunkTimesMs[0] ?? e2eMs, e2eMs, chunkTimesMs, outputTokens };
}
