// The prefix-cache bench's workloads against one kiln server: a Responses chain and a Messages conversation turn by
// turn, clients sharing one system prompt all at once, and rounds of fresh prompts; each with what /metrics counted.
import type { FreshChat } from "./fresh-chat.ts";
import { type LevelSummary, summarize } from "./metrics.ts";
import type { Conversation, Shared } from "./prefix-report.ts";
import { counterDelta, parsePromText, type Sample } from "./prom-text.ts";
import { streamChat, streamMessages, streamResponse } from "./stream-client.ts";

/** A server and the model the bench runs on it. */
export interface Target {
  url: string;
  key: string;
  model: string;
}

/** The server's /metrics (read over loopback, which needs no token: src/metrics/access.ts); empty when unreadable. */
export async function scrape(url: string): Promise<Sample[]> {
  try {
    const res = await fetch(`${url}/metrics`);
    return res.ok ? parsePromText(await res.text()) : [];
  } catch {
    return [];
  }
}

/**
 * `run`, with how far kiln_prefill_tokens_total grew across it (undefined when the server does not export it). The
 * worker reports its counts on the step message that carries the step's tokens, so once the last stream has ended the
 * counter already holds every prefill the run caused: no wait is needed.
 */
export async function withPrefill<T>(t: Target, run: () => Promise<T>): Promise<{ value: T; prefillTokens?: number }> {
  const before = await scrape(t.url);
  const value = await run();
  return { value, prefillTokens: counterDelta(before, await scrape(t.url), "kiln_prefill_tokens_total", { model: t.model }) };
}

/** A turn of a conversation must end as a turn does; a failed one would make its TTFT meaningless. */
function ended(status: string, what: string): void {
  if (status !== "completed" && status !== "incomplete") throw new Error(`${what} ended ${status || "without a status"}`);
}

/**
 * The bench model's random weights mostly write reserved vocabulary entries, whose text ("<|reserved_57796|>") comes
 * back as about 13 tokens when a client re-sends it: a 16-token reply would add some 200 tokens to the next turn, not
 * the few a real model's reply adds. So replies are held to short, plain text: a Responses turn answers a one-field
 * JSON object (structured output), a Messages turn stops at the first "|" (a reserved entry's text gives its "<"
 * and stops, so the reply streams a first character at once), so each turn adds its input and a few tokens, as a
 * conversation whose replies round-trip does.
 */
const SHORT_REPLY = {
  type: "json_schema", name: "reply", strict: true,
  schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false },
};

/** One Responses turn per input, each continuing the last through previous_response_id (stored, as chaining needs). */
export async function responsesChain(t: Target, inputs: readonly string[], maxTokens: number): Promise<Conversation> {
  const ttftMs: number[] = [];
  let previous: string | undefined;
  let cachedLast: number | undefined;
  const { prefillTokens } = await withPrefill(t, async () => {
    for (const [i, input] of inputs.entries()) {
      const r = await streamResponse(t.url, t.key, {
        model: t.model, input, max_output_tokens: maxTokens, temperature: 0, store: true, text: { format: SHORT_REPLY }, ...(previous ? { previous_response_id: previous } : {}),
      });
      ended(r.status, `Responses turn ${i + 1}`);
      ttftMs.push(r.ttftMs);
      previous = r.id;
      cachedLast = r.cachedTokens;
    }
  });
  return { ttftMs, cachedLast, prefillTokens };
}

/** What the history carries for a turn whose reply was empty (Messages refuses empty content). */
const EMPTY_REPLY = "(no reply)";

/** One Messages turn per input, the whole history re-sent each time with the earlier replies as assistant text. */
export async function messagesHistory(t: Target, inputs: readonly string[], maxTokens: number): Promise<Conversation> {
  const ttftMs: number[] = [];
  const history: { role: "user" | "assistant"; content: string }[] = [];
  let cachedLast: number | undefined;
  const { prefillTokens } = await withPrefill(t, async () => {
    for (const [i, input] of inputs.entries()) {
      history.push({ role: "user", content: input });
      const r = await streamMessages(t.url, t.key, { model: t.model, messages: history, max_tokens: maxTokens, temperature: 0, stop_sequences: ["|"] });
      if (!r.stopReason) throw new Error(`Messages turn ${i + 1} ended without a stop reason`);
      ttftMs.push(r.ttftMs);
      history.push({ role: "assistant", content: r.text || EMPTY_REPLY });
      cachedLast = r.cachedTokens;
    }
  });
  return { ttftMs, cachedLast, prefillTokens };
}

/** Every question at once, each after the same system prompt (streaming chat, `maxTokens` each). */
export async function sharedSystem(t: Target, system: string, questions: readonly string[], maxTokens: number): Promise<Shared> {
  const { value: runs, prefillTokens } = await withPrefill(t, () =>
    Promise.all(
      questions.map((q) =>
        streamChat(t.url, t.key, { model: t.model, messages: [{ role: "system", content: system }, { role: "user", content: q }], max_tokens: maxTokens, temperature: 0, ignore_eos: true }),
      ),
    ),
  );
  for (const r of runs) if (r.outputTokens !== maxTokens) throw new Error(`a shared-system client got ${r.outputTokens} tokens, not ${maxTokens}`);
  // A sum only when every answer reported its cached tokens.
  const cached = runs.map((r) => r.cachedTokens);
  return { ttftMs: runs.map((r) => r.ttftMs), prefillTokens, cachedTokens: cached.every((c) => c !== undefined) ? cached.reduce((a, b) => a! + b!, 0) : undefined };
}

/** One round of `clients` streaming requests at once, each with a fresh prompt and exactly `newTokens` tokens. */
export async function freshRound(t: Target, fresh: FreshChat, clients: number, newTokens: number): Promise<LevelSummary> {
  const t0 = performance.now();
  const runs = await Promise.all(
    Array.from({ length: clients }, () =>
      streamChat(t.url, t.key, { model: t.model, messages: [{ role: "user", content: fresh.next() }], max_tokens: newTokens, temperature: 0, ignore_eos: true }),
    ),
  );
  const s = summarize(clients, runs, performance.now() - t0);
  for (const r of runs) if (r.outputTokens !== newTokens) throw new Error(`a fresh-prompt client got ${r.outputTokens} tokens, not ${newTokens}`);
  return s;
}

/** The same first requests on every server (chat, Responses, Messages), fresh prompts, so no side starts colder. */
export async function warmUp(t: Target, fresh: FreshChat): Promise<void> {
  await streamChat(t.url, t.key, { model: t.model, messages: [{ role: "user", content: fresh.next() }], max_tokens: 4, temperature: 0 });
  await streamResponse(t.url, t.key, { model: t.model, input: fresh.next(), max_output_tokens: 16, temperature: 0, store: true });
  // The conversations' reply format, so its grammar is compiled before the first turn is timed.
  await streamResponse(t.url, t.key, { model: t.model, input: fresh.next(), max_output_tokens: 16, temperature: 0, store: false, text: { format: SHORT_REPLY } });
  await streamMessages(t.url, t.key, { model: t.model, messages: [{ role: "user", content: fresh.next() }], max_tokens: 4, temperature: 0 });
}
