// POST /v1/responses and /v1/responses/input_tokens: validate and map onto the core request, run it through the shared
// lifecycle, and assemble the response object (or its event stream) from the core's blocks.
import type { AppDeps } from "../../app-deps.ts";
import { textModel } from "../text-model.ts";
import type { AuthContext } from "../../auth/authenticate.ts";
import { ApiError } from "../../errors/api-error.ts";
import { consumeRun, streamRun } from "../../http/run-response.ts";
import type { StreamEnd } from "../../http/sse-writer.ts";
import { prepareGeneration } from "../../inference/generate.ts";
import { newResponseId } from "../../inference/ids.ts";
import { startRun } from "../../inference/lifecycle.ts";
import { ResponseAssembler } from "./assembler.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import { responseFrames, SequencedFrames } from "./stream.ts";
import { type ResponsesPlan, responsesRequest } from "./validate.ts";
import { webSearchSetup } from "./web-search.ts";

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  signal: AbortSignal;
  onStreamEnd?: (end: StreamEnd) => void;
}

/** The request fields a response object echoes, with the format's defaults. */
function echo(body: ResponsesRequestBody, plan: ResponsesPlan): Record<string, unknown> {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: plan.effort, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    background: false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? (body.tools?.length ? "auto" : "none"),
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    user: body.user ?? null,
  };
}

export async function createResponse(deps: AppDeps, body: ResponsesRequestBody, ctx: CallContext): Promise<Record<string, unknown> | Response> {
  if (deps.lifecycle.draining) throw ApiError.shuttingDown();
  const model = textModel(deps, body.model);
  const plan = responsesRequest(body, model, deps.sealer, webSearchSetup(deps.config));
  const run = await startRun(deps, {
    scope: { requestId: ctx.requestId, teamId: ctx.auth.teamId, keyId: ctx.auth.keyId, endpoint: "responses" },
    model,
    request: plan.request,
    clientSignal: ctx.signal,
    timeoutMs: body.stream ? null : deps.config.requestTimeoutMs,
  });
  const asm = new ResponseAssembler({
    id: newResponseId(), model: model.id, createdAt: Math.floor(Date.now() / 1000), echo: echo(body, plan),
    sealer: deps.sealer, includeEncrypted: plan.includeEncrypted, summary: plan.summary,
  });
  if (body.stream) {
    const seq = new SequencedFrames();
    return streamRun(run, {
      frames: responseFrames(run, asm, seq),
      errorFrame: (err) => seq.frame({ type: "error", code: "server_error", message: err.message, param: null }),
      logger: deps.logger,
      requestId: ctx.requestId,
      onStreamEnd: ctx.onStreamEnd,
    });
  }
  await consumeRun(run, (ev) => void asm.push(ev), deps.config.requestTimeoutMs);
  return asm.response();
}

/**
 * The input tokens the same request would be billed: the prompt it renders to, counted. With web_search on, a
 * response that searches is billed each generation step's prompt, so this is the first step's share.
 */
export async function countInputTokens(deps: AppDeps, body: ResponsesRequestBody): Promise<{ object: "response.input_tokens"; input_tokens: number }> {
  const model = textModel(deps, body.model);
  const plan = responsesRequest({ ...body, stream: false }, model, deps.sealer, webSearchSetup(deps.config));
  const prepared = await prepareGeneration(deps, model, plan.request);
  return { object: "response.input_tokens", input_tokens: prepared.promptIds.length };
}
