// What each client's format requires of an answer (compat.md), as assertions: Responses, Chat Completions and
// Messages, as JSON or as the streamed frames read so far, and each format's error body.
import { expect } from "bun:test";
import type { SseFrame } from "./sse-frames.ts";

type Json = Record<string, any>;

const RESPONSES_TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/** Stop reading a Responses stream at its end, or once output is streaming (the protocol is then shown). */
export const responsesStop = (f: SseFrame) => RESPONSES_TERMINAL.has(f.data?.type) || /\.delta$/.test(f.data?.type ?? "");
/** Stop reading a Messages stream at its end, or at its first content delta. */
export const messagesStop = (f: SseFrame) => f.data?.type === "message_stop" || f.data?.type === "content_block_delta" || f.data?.type === "error";

export function expectResponseObject(body: Json): void {
  expect(body.object).toBe("response");
  expect(Array.isArray(body.output)).toBe(true);
  expect(["completed", "incomplete"]).toContain(body.status);
}

/** response.created first, each frame's event named as its type, sequence numbers from 0, never a failure. */
export function expectResponsesStream(frames: SseFrame[]): void {
  expect(frames[0]?.data?.type).toBe("response.created");
  frames.forEach((f, i) => {
    expect(f.event).toBe(f.data.type);
    expect(f.data.sequence_number).toBe(i);
  });
  const types = frames.map((f) => f.data.type);
  expect(types).not.toContain("response.failed");
  expect(types).not.toContain("error");
  expect(types.some((t) => t === "response.output_item.added" || t === "response.completed" || t === "response.incomplete")).toBe(true);
}

export function expectChatCompletion(body: Json): void {
  expect(body.object).toBe("chat.completion");
  expect(body.choices[0].message.role).toBe("assistant");
}

/** chunk frames, then (with include_usage) one usage chunk with no choices, then [DONE]. */
export function expectChatStream(frames: SseFrame[], includeUsage: boolean): Json[] {
  expect(frames[frames.length - 1]?.data).toBe("[DONE]");
  const chunks = frames.slice(0, -1).map((f) => f.data as Json);
  for (const c of chunks) expect(c.object).toBe("chat.completion.chunk");
  if (includeUsage) expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  return chunks;
}

export function expectMessage(body: Json): void {
  expect(body).toMatchObject({ type: "message", role: "assistant" });
  expect(Array.isArray(body.content)).toBe(true);
  expect(["end_turn", "max_tokens", "stop_sequence", "tool_use"]).toContain(body.stop_reason);
}

/** message_start first, each frame's event named as its type, no error. */
export function expectMessagesStream(frames: SseFrame[]): void {
  expect(frames[0]?.data?.type).toBe("message_start");
  for (const f of frames.filter((f) => f.data?.type !== "ping")) expect(f.event).toBe(f.data.type);
  expect(frames.map((f) => f.data.type)).not.toContain("error");
  expect(frames.length).toBeGreaterThan(1);
}

/** The format's error body with `status` and `param`; its message, for further checks. */
export function expectError(format: "openai" | "messages", status: number, body: Json, got: number, param: string | null): string {
  const error = format === "messages" ? (expect(body.type).toBe("error"), body.error) : body.error;
  expect({ status: got, param: error?.param, type: error?.type }).toEqual({ status, param, type: "invalid_request_error" });
  expect(typeof error.message).toBe("string");
  return error.message;
}
