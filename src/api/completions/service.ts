// POST /v1/completions: validate and map onto the core (one raw-prompt request per prompt, run as one request
// through the shared text run), encode the choices as a text_completion object or chunks through the one SSE writer.
import type { AppDeps } from "../../app-deps.ts";
import { ApiError } from "../../errors/api-error.ts";
import { streamRun } from "../../http/run-response.ts";
import { openaiBody } from "../openai-body.ts";
import { openaiFrames } from "../openai-frames.ts";
import { joinedText } from "../../inference/blocks.ts";
import { type Run, startRun } from "../../inference/text-run.ts";
import type { CoreRequest } from "../../inference/request.ts";
import type { ModelEntry } from "../../models/registry.ts";
import { rightPaddedOnCpu } from "../../models/padding.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { textModel } from "../text-model.ts";
import { legacyLogprobs } from "./legacy-logprobs.ts";
import type { CompletionBody, CompletionRequestBody } from "./schema.ts";
import { CompletionChunkEncoder, completionFinish, completionUsage } from "./stream.ts";
import { completionRequests, scoresPrompt } from "./validate.ts";

interface Head {
  id: string;
  created: number;
  model: string;
}

const newCompletionId = () => `cmpl-${crypto.randomUUID().replace(/-/g, "")}`;

export async function createCompletion(deps: AppDeps, body: CompletionRequestBody, ctx: CallContext): Promise<CompletionBody | Response> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const model = textModel(deps, body.model, "support completions");
  const [first, ...siblings] = completionRequests(body);
  // The GPU graphs return the last position's logits only, and so does the right-padded runner of a GroupQueryAttention
  // graph on the CPU: a prompt cannot be scored there.
  if (scoresPrompt(body) && model.placement?.device === "webgpu") {
    throw ApiError.badRequest(`The model '${model.id}' runs on the GPU, whose graphs keep only the last position's logits: echo with logprobs (or max_tokens 0) needs a model on the CPU.`, "echo");
  }
  if (scoresPrompt(body) && rightPaddedOnCpu(model)) {
    throw ApiError.badRequest(
      `The model '${model.id}' is a GroupQueryAttention export, run with its rows right-padded and only the last position's logits kept: echo with logprobs (or max_tokens 0) needs a model kiln builds or imports (its GGUF or Hugging Face folder).`,
      "echo",
    );
  }
  const choices = (siblings.length + 1) * first!.n;
  // Every choice is a queue entry: more than the queue holds could never be admitted, so retrying would not help.
  if (choices > deps.config.maxQueue) {
    throw ApiError.badRequest(`The prompts and n ask for ${choices} generations, but this server admits at most ${deps.config.maxQueue} at once (KILN_MAX_QUEUE).`, "n");
  }
  const echoes = body.echo ? await echoTexts(deps, model, [first!, ...siblings]) : [];
  const run = await startRun(deps, {
    scope: callScope(ctx, "completions"),
    model,
    request: first!,
    siblings,
    clientSignal: ctx.signal,
    timeoutMs: body.stream ? null : deps.config.requestTimeoutMs,
  });
  const head = { id: newCompletionId(), created: Math.floor(Date.now() / 1000), model: model.id };
  const logprobs = body.logprobs != null;
  if (body.stream) {
    const includeUsage = !!body.stream_options?.include_usage;
    return streamRun(run, {
      frames: openaiFrames(run, new CompletionChunkEncoder({ ...head, includeUsage, logprobs, echoes }), includeUsage),
      errorFrame: (err) => ({ data: JSON.stringify(err.toBody()) }),
      logger: deps.logger,
      requestId: ctx.requestId,
      onStreamEnd: ctx.onStreamEnd,
    });
  }
  return completion(deps, run, head, echoes, logprobs);
}

/** Each choice's echoed prompt, prompt-major as the choices are: the text as sent, or token ids decoded. */
async function echoTexts(deps: AppDeps, model: ModelEntry, requests: CoreRequest[]): Promise<string[]> {
  const tokenizer = await deps.tokenizers.get(model);
  return requests.flatMap((r) => {
    const text = typeof r.rawPrompt === "string" ? r.rawPrompt : tokenizer.decodeText(r.rawPrompt!);
    return Array.from({ length: r.n }, () => text);
  });
}

function completion(deps: AppDeps, run: Run, head: Head, echoes: string[], logprobs: boolean): Promise<CompletionBody> {
  return openaiBody(run, deps.config.requestTimeoutMs, { ...head, object: "text_completion" }, {
    usage: completionUsage,
    choice: (r, index) => {
      const echo = echoes[index] ?? "";
      return {
        index,
        text: echo + joinedText(r.blocks, "text"),
        logprobs: logprobs ? legacyLogprobs(r.logprobs ?? [], echo.length, r.promptLogprobs) : null,
        finish_reason: completionFinish(r.finish),
      };
    },
  });
}
