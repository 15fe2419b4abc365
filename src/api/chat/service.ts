// POST /v1/chat/completions: validate and map onto the core request, run it as the shared text run, encode
// the blocks as a chat.completion object or chunks through the one SSE writer.
import type { AppDeps } from "../../app-deps.ts";
import { textModel } from "../text-model.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { ApiError } from "../../errors/api-error.ts";
import { streamRun } from "../../http/run-response.ts";
import { openaiBody } from "../openai-body.ts";
import { openaiFrames } from "../openai-frames.ts";
import { echoedTier, requestedLane } from "../service-tier-field.ts";
import { joinedText, toolCalls } from "../../inference/blocks.ts";
import { chatCallId, newChatCompletionId } from "./ids.ts";
import { type Run, startRun } from "../../inference/text-run.ts";
import { chatFinishReason, chatLogprobs } from "./finish.ts";
import type { ChatCompletionBody, ChatRequestBody } from "./schema.ts";
import { ChatChunkEncoder, type ChunkHead, chatUsage } from "./stream.ts";
import { chatRequest } from "./validate.ts";

export async function createChatCompletion(deps: AppDeps, body: ChatRequestBody, ctx: CallContext): Promise<ChatCompletionBody | Response> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const model = textModel(deps, body.model, "support chat completions");
  const request = chatRequest(body, model);
  // n choices are n queue entries: more than the queue holds could never be admitted, so retrying would not help.
  if (request.n > deps.config.maxQueue) {
    throw ApiError.badRequest(`n is ${request.n}, but this server admits at most ${deps.config.maxQueue} generations at once (KILN_MAX_QUEUE).`, "n");
  }
  const scope = callScope(ctx, "chat", requestedLane(body.service_tier));
  const run = await startRun(deps, {
    scope,
    model,
    request,
    clientSignal: ctx.signal,
    timeoutMs: body.stream ? null : deps.config.requestTimeoutMs,
  });
  const head = { id: newChatCompletionId(), created: Math.floor(Date.now() / 1000), model: model.id, service_tier: echoedTier(scope.tier) };
  if (body.stream) {
    const includeUsage = !!body.stream_options?.include_usage;
    return streamRun(run, {
      frames: openaiFrames(run, new ChatChunkEncoder({ ...head, includeUsage }), includeUsage),
      errorFrame: (err) => ({ data: JSON.stringify(err.toBody()) }),
      logger: deps.logger,
      requestId: ctx.requestId,
      onStreamEnd: ctx.onStreamEnd,
    });
  }
  return completion(deps, run, head);
}

async function completion(deps: AppDeps, run: Run, { service_tier, ...head }: Omit<ChunkHead, "includeUsage">): Promise<ChatCompletionBody> {
  const body = await openaiBody(run, deps.config.requestTimeoutMs, { ...head, object: "chat.completion" }, {
    usage: chatUsage,
    choice: (r, index) => {
      const text = joinedText(r.blocks, "text");
      const reasoning = joinedText(r.blocks, "reasoning");
      const calls = toolCalls(r.blocks);
      return {
        index,
        message: {
          role: "assistant" as const,
          content: calls.length && !text ? null : text,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          refusal: null,
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: chatCallId(c.id), type: "function" as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
        logprobs: chatLogprobs(r.logprobs),
        finish_reason: chatFinishReason(r.finish),
      };
    },
  });
  return { ...body, service_tier };
}
