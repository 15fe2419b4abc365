// Seeded runs against a real server for the constrained-decoding tests: 16 at a time (one full batch), one sampled
// request (temperature 1) to any format, and the SSE frames of chat (data-only) and of Responses and Messages (named
// events) as parsed JSON.
import type { TestServer } from "./server.ts";

export const RUNS = 100;

/** Runs seeds 1..runs, 16 at a time, and returns each result. */
export async function seeded<T>(run: (seed: number) => Promise<T>, runs = RUNS): Promise<T[]> {
  const out: T[] = [];
  for (let start = 1; start <= runs; start += 16) {
    const seeds = Array.from({ length: Math.min(16, runs - start + 1) }, (_, i) => start + i);
    out.push(...(await Promise.all(seeds.map(run))));
  }
  return out;
}

/** Every streamed chat chunk's data. */
export const sseData = (text: string): any[] => text.split("\n\n").flatMap((f) => (f.startsWith("data: {") ? [JSON.parse(f.slice(6))] : []));

/** Every named SSE event's data (Responses and Messages streams), in order. */
export function sseEvents(text: string): any[] {
  return text.split("\n\n").flatMap((frame) => {
    const data = frame.split("\n").find((l) => l.startsWith("data: "));
    return data ? [JSON.parse(data.slice(6))] : [];
  });
}

/** POSTs a body for the server's model at temperature 1 (headers for every format); a streamed body is left as text. */
export async function postSampled(s: TestServer, path: string, body: Record<string, unknown>): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: s.modelId, temperature: 1, ...body }),
  });
  const text = await res.text();
  return { status: res.status, body: body.stream ? null : JSON.parse(text), text };
}
