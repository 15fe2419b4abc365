// POST /v1/responses and /v1/responses/input_tokens: validate and map onto the core request, run it as the shared
// text run, and assemble the response object (or its event stream) from the core's blocks. A stored response
// (store defaults to true) is written to the database; a streamed or background one is driven by stored.ts.
import type { AppDeps } from "../../app-deps.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { requestedLane } from "../service-tier-field.ts";
import { insertResponse, type StoredItem } from "../../db/responses-repo.ts";
import { ApiError } from "../../errors/api-error.ts";
import { consumeRun, streamRun } from "../../http/run-response.ts";
import { newResponseId } from "./ids.ts";
import type { RequestScope } from "../../inference/admitted-run.ts";
import { countPrompt, startRun } from "../../inference/text-run.ts";
import { textModel } from "../text-model.ts";
import type { ResponseAssembler } from "./assembler.ts";
import { storedInput } from "./items.ts";
import { planResponse } from "./plan.ts";
import { followStream } from "./retrieve.ts";
import { inlineMediaBytes } from "./inline-media.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import { launch, newAssembler, responseRow } from "./stored.ts";
import { responseFrames, SequencedFrames } from "./stream.ts";
import { checkOptions } from "./validate.ts";

export interface ResponsesCall extends CallContext {
  /** The JSON body's size as received, for the background limit. */
  bodyBytes: number;
}

/** A background request's JSON body may be at most this many bytes (spec, Limits). */
export const BACKGROUND_BODY_LIMIT = 1_048_576;

/** Copies of the echoed request a stored stream keeps besides its row: created, queued or in_progress, the terminal event, the response. */
const ECHO_COPIES = 4;

function tooLarge(bytes: number, limit: number, inlineMedia: number): ApiError {
  const advice = inlineMedia
    ? `${inlineMedia} of them are inline media: upload media through the Files API and reference it by file_id, or set store: false.`
    : "Send it with store: false, or with less input.";
  return new ApiError(
    413, "invalid_request_error",
    `This response is ${bytes} bytes stored, above the ${limit}-byte limit for a stored response (KILN_MAX_STORED_RESPONSE_BYTES). ${advice}`,
    "payload_too_large",
  );
}

export async function createResponse(deps: AppDeps, body: ResponsesRequestBody, ctx: ResponsesCall): Promise<Record<string, unknown> | Response> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  if (body.background && ctx.bodyBytes > BACKGROUND_BODY_LIMIT) {
    throw new ApiError(
      413, "invalid_request_error",
      `A background request's JSON body may be at most ${BACKGROUND_BODY_LIMIT} bytes; this one is ${ctx.bodyBytes}. Upload media through the Files API, or send it without background.`,
      "payload_too_large",
    );
  }
  checkOptions(body);
  const model = textModel(deps, body.model);
  const plan = await planResponse(deps, body, model, ctx.auth.teamId);
  const scope: RequestScope = callScope(ctx, "responses", requestedLane(body.service_tier));
  const id = newResponseId();
  const createdAt = Math.floor(Date.now() / 1000);
  const store = body.store !== false;
  const background = body.background ?? false;
  const limit = deps.config.maxStoredResponseBytes;

  if (!store || (!body.stream && !background)) {
    // Answered by this request alone; a stored one is written once it is complete (the spec's order: inference
    // completes, then storing it may fail with 413).
    const run = await startRun(deps, { scope, model, request: plan.request, clientSignal: ctx.signal, timeoutMs: body.stream ? null : deps.config.requestTimeoutMs });
    const asm = newAssembler(deps, { id, model, createdAt, body, plan, scope });
    if (body.stream) return streamPlain(deps, run, asm, ctx);
    await consumeRun(run, (ev) => void asm.push(ev), deps.config.requestTimeoutMs);
    if (!store) return asm.response();
    const { items, requestJson, bytes } = storedRequest(body);
    const row = responseRow(deps, { id, scope, model, body, createdAt, requestJson, asm, storedBytes: 0, background: false });
    row.storedBytes = bytes + Buffer.byteLength(row.responseJson);
    if (row.storedBytes > limit) throw tooLarge(row.storedBytes, limit, inlineMediaBytes(body.input));
    await insertResponse(deps.db, row, items, asm.reasoningIds());
    return asm.response();
  }

  // A stream or a job cannot turn into a 413 once it has begun, so it is measured first: its input items, and the
  // request as its row, its final response and the up to three lifecycle events that echo it keep it (the
  // generated part is bounded by the context window: at most one delta event per token).
  const fresh = storedRequest(body);
  const kept = fresh.bytes + ECHO_COPIES * Buffer.byteLength(fresh.requestJson);
  if (kept > limit) throw tooLarge(kept, limit, inlineMediaBytes(body.input));
  const created = await launch(deps, { body, model, plan, scope, id, createdAt, background, clientSignal: background ? null : ctx.signal, fresh, epoch: 0 });
  if (body.stream) return followStream(deps, id, -1, { abortOnLeave: !background, teamId: scope.teamId, requestId: ctx.requestId, onStreamEnd: ctx.onStreamEnd });
  return created;
}

/** What a stored response keeps of its request: the input items, the rest of the body as JSON, and their bytes. */
function storedRequest(body: ResponsesRequestBody): { items: StoredItem[]; requestJson: string; bytes: number } {
  const { input: _input, ...rest } = body;
  const requestJson = JSON.stringify(rest);
  const items = storedInput(body.input);
  return { items, requestJson, bytes: items.reduce((n, it) => n + Buffer.byteLength(JSON.stringify(it.item)), Buffer.byteLength(requestJson)) };
}

/** A stream that is not stored: the assembler's events straight to the client, whose leaving stops the run. */
function streamPlain(deps: AppDeps, run: Awaited<ReturnType<typeof startRun>>, asm: ResponseAssembler, ctx: CallContext): Response {
  const seq = new SequencedFrames();
  return streamRun(run, {
    frames: responseFrames(run, asm, seq),
    errorFrame: (err) => seq.frame({ type: "error", code: "server_error", message: err.message, param: null }),
    logger: deps.logger,
    requestId: ctx.requestId,
    onStreamEnd: ctx.onStreamEnd,
  });
}

/**
 * The input tokens the same request would be billed: the prompt it renders to, counted. With web_search on, a
 * response that searches is billed each generation step's prompt, so this is the first step's share.
 */
export async function countInputTokens(
  deps: AppDeps,
  body: ResponsesRequestBody,
  who: { teamId: number; keyId: number },
  limits: { clientSignal: AbortSignal; timeoutMs: number },
): Promise<{ object: "response.input_tokens"; input_tokens: number }> {
  const model = textModel(deps, body.model);
  const plan = await planResponse(deps, { ...body, stream: false, background: false }, model, who.teamId);
  return { object: "response.input_tokens", input_tokens: await countPrompt(deps, model, plan.request, who, limits) };
}
