// POST /v1/messages and /v1/messages/count_tokens: validate and map onto the core request, run it as the shared
// text run, assemble the message (or its event stream, with pings while idle) from the core's blocks.
import type { AppDeps } from "../../app-deps.ts";
import { textModel } from "../text-model.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { messagesTier } from "../service-tier-field.ts";
import { ApiError } from "../../errors/api-error.ts";
import { consumeRun, streamRun } from "../../http/run-response.ts";
import type { SseFrame, StreamEnd } from "../../http/sse-writer.ts";
import { newMessageId } from "./ids.ts";
import { countPrompt, type Run, startRun } from "../../inference/text-run.ts";
import { MessageAssembler, type MessagesEvent, messagesErrorBody } from "./assembler.ts";
import type { MessagesRequestBody } from "./schema.ts";
import { messagesRequest } from "./validate.ts";

/** Idle streams get a ping this often, as the format's clients expect. */
const PING_MS = 10_000;

/** Every frame's event name is its data's type: the format's clients dispatch on it. */
const frame = (ev: MessagesEvent): SseFrame => ({ event: ev.type, data: JSON.stringify(ev) });

async function* messageFrames(run: Run, asm: MessageAssembler): AsyncGenerator<SseFrame, StreamEnd> {
  for (const ev of asm.start()) yield frame(ev);
  for await (const core of run.choices[0]!) {
    for (const ev of asm.push(core)) {
      yield frame(ev);
      if (ev.type === "error") return { outcome: "error", code: (ev.error as { code: string | null }).code };
    }
  }
  return { outcome: "completed" };
}

export async function createMessage(deps: AppDeps, body: MessagesRequestBody, ctx: CallContext): Promise<Record<string, unknown> | Response> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const model = textModel(deps, body.model);
  const plan = messagesRequest(body, model, deps.sealer);
  const scope = callScope(ctx, "messages");
  const run = await startRun(deps, {
    scope,
    model,
    request: plan.request,
    clientSignal: ctx.signal,
    timeoutMs: body.stream ? null : deps.config.requestTimeoutMs,
  });
  const asm = new MessageAssembler({ id: newMessageId(), model: model.id, inputTokens: run.inputTokens, sealer: deps.sealer, tier: messagesTier(scope.tier) });
  if (body.stream) {
    return streamRun(run, {
      frames: messageFrames(run, asm),
      heartbeatMs: PING_MS,
      heartbeat: frame({ type: "ping" }),
      errorFrame: (err) => frame(messagesErrorBody(err) as MessagesEvent),
      logger: deps.logger,
      requestId: ctx.requestId,
      onStreamEnd: ctx.onStreamEnd,
    });
  }
  await consumeRun(run, (ev) => asm.push(ev), deps.config.requestTimeoutMs);
  return asm.message();
}

/** The input tokens the same request would be billed. */
export async function countMessageTokens(deps: AppDeps, body: MessagesRequestBody, who: { teamId: number; keyId: number }, limits: { clientSignal: AbortSignal; timeoutMs: number }): Promise<{ input_tokens: number }> {
  const model = textModel(deps, body.model);
  // Counting needs no output budget: the prompt is what is counted.
  const plan = messagesRequest({ ...body, max_tokens: body.max_tokens ?? Number.MAX_SAFE_INTEGER }, model, deps.sealer);
  return { input_tokens: await countPrompt(deps, model, { ...plan.request, maxTokens: null }, who, limits) };
}
