// POST /v1/chat/completions: request → core generation → a chat.completion object or an SSE stream; usage recorded.
import type { AppDeps } from "../../app-deps.ts";
import type { AuthContext } from "../../auth/authenticate.ts";
import { costMicros } from "../../billing/cost.ts";
import { recordUsage, type UsageStatus } from "../../db/usage-repo.ts";
import { ApiError } from "../../errors/api-error.ts";
import { collectChoice, type CoreEvent } from "../../inference/events.ts";
import { startGeneration } from "../../inference/generate.ts";
import { mergeStreams } from "../../inference/merge.ts";
import type { ChatCompletionBody, ChatRequestBody } from "./schema.ts";
import { ChatChunkEncoder, sseData } from "./stream.ts";
import { normalizeChat } from "./validate.ts";


export interface CallContext {
  auth: AuthContext;
  requestId: string;
  signal: AbortSignal;
}

export async function createChatCompletion(deps: AppDeps, body: ChatRequestBody, ctx: CallContext): Promise<ChatCompletionBody | Response> {
  if (deps.lifecycle.draining) throw ApiError.shuttingDown();
  const model = deps.registry.get(body.model);
  if (!model) throw ApiError.modelNotFound(body.model);
  if (!model.capabilities.chat) throw ApiError.badRequest(`The model '${model.id}' does not support chat completions.`, "model");
  const chat = normalizeChat(body, model);
  // n choices are n queue entries: more than the queue holds could never be admitted, so retrying would not help.
  if (chat.n > deps.config.maxQueue) {
    throw ApiError.badRequest(`n is ${chat.n}, but this server admits at most ${deps.config.maxQueue} generations at once (KILN_MAX_QUEUE).`, "n");
  }
  const abort = new AbortController();
  const onClientGone = () => abort.abort();
  ctx.signal.addEventListener("abort", onClientGone, { once: true });
  const gen = await startGeneration(deps, { model, ...chat, signal: abort.signal });
  const id = `chatcmpl-${crypto.randomUUID().replace(/-/g, "")}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { input: gen.inputTokens, output: 0 };
  const record = (status: UsageStatus) => {
    try {
      // Reasoning and cached tokens stay 0 until the core counts them (kiln has no prompt cache yet).
      const tokens = { inputTokens: usage.input, outputTokens: usage.output };
      recordUsage(deps.db, {
        requestId: ctx.requestId, teamId: ctx.auth.teamId, keyId: ctx.auth.keyId, model: model.id, endpoint: "chat", status,
        ...tokens, reasoningTokens: 0, cachedTokens: 0, costMicros: costMicros(model.pricing, tokens),
      });
    } catch (e) {
      // A failed usage write must not replace the answer (or the real error) the client is owed.
      deps.logger.error("usage not recorded", { request_id: ctx.requestId, error: String(e) });
    }
  };

  if (body.stream) {
    const encoder = new ChatChunkEncoder({ id, created, model: model.id, includeUsage: !!body.stream_options?.include_usage });
    const onCrash = (e: unknown) =>
      deps.logger.error("unhandled exception", {
        request_id: ctx.requestId,
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        stack: e instanceof Error ? e.stack : undefined,
      });
    return sseResponse(mergeStreams(gen.choices), encoder, usage, onCrash, (status) => {
      ctx.signal.removeEventListener("abort", onClientGone);
      abort.abort();
      record(status);
    });
  }

  const timer = setTimeout(() => abort.abort(new DOMException("timeout", "TimeoutError")), deps.config.requestTimeoutMs);
  let status: UsageStatus = "failed";
  try {
    const results = await Promise.all(gen.choices.map((c) => collectChoice(c)));
    if (abort.signal.aborted && abort.signal.reason instanceof DOMException && abort.signal.reason.name === "TimeoutError") {
      status = "timed_out";
      throw ApiError.timeout(deps.config.requestTimeoutMs);
    }
    status = "completed";
    usage.output = results.reduce((s, r) => s + r.outputTokens, 0);
    return {
      id,
      object: "chat.completion",
      created,
      model: model.id,
      system_fingerprint: "kiln",
      choices: results.map((r, index) => ({
        index,
        message: {
          role: "assistant" as const,
          content: r.toolCalls.length && !r.text ? null : r.text,
          ...(r.reasoning ? { reasoning_content: r.reasoning } : {}),
          refusal: null,
          ...(r.toolCalls.length
            ? { tool_calls: r.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) }
            : {}),
        },
        logprobs: null,
        finish_reason: r.finish === "cancelled" ? "stop" : r.finish,
      })),
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onClientGone);
    abort.abort();
    // A client that left is recorded as gone, however the generation then ended.
    record(ctx.signal.aborted ? "client_gone" : status);
  }
}

function sseResponse(
  events: AsyncGenerator<{ index: number; item: CoreEvent }>,
  encoder: ChatChunkEncoder,
  usage: { input: number; output: number },
  onCrash: (e: unknown) => void,
  done: (status: UsageStatus) => void,
): Response {
  const bytes = new TextEncoder();
  let finished = false;
  const finish = (status: UsageStatus) => {
    if (finished) return;
    finished = true;
    done(status);
  };
  const stream = new ReadableStream<Uint8Array>({
    // Each pull must enqueue or close: a pull that returns empty-handed is not called again.
    async pull(controller) {
      try {
        for (;;) {
          const next = await events.next();
          if (next.done) {
            if (encoder.includeUsage) controller.enqueue(bytes.encode(sseData(encoder.usage(usage.input, usage.output))));
            controller.enqueue(bytes.encode(sseData("[DONE]")));
            controller.close();
            finish("completed");
            return;
          }
          const { index, item } = next.value;
          if (item.type === "usage") {
            usage.output += item.outputTokens;
            continue;
          }
          if (item.type === "error") {
            controller.enqueue(bytes.encode(sseData(item.error.toBody())));
            controller.close();
            finish("failed");
            void events.return(undefined);
            return;
          }
          const chunks = encoder.encode(index, item);
          for (const chunk of chunks) controller.enqueue(bytes.encode(sseData(chunk)));
          if (chunks.length) return;
        }
      } catch (e) {
        onCrash(e);
        controller.enqueue(bytes.encode(sseData(ApiError.internal().toBody())));
        controller.close();
        finish("failed");
      }
    },
    cancel() {
      void events.return(undefined);
      finish("client_gone");
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
