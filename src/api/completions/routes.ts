// POST /v1/completions (OpenAI's legacy Completions format).
import type { AppDeps } from "../../app-deps.ts";
import { generationRoutes } from "../generation-routes.ts";
import { Completion, CompletionRequest } from "./schema.ts";
import { createCompletion } from "./service.ts";

/** The OpenAPI entry of the route. */
const DETAIL = {
  summary: "Create a completion (legacy)",
  description: "OpenAI's legacy Completions format: the prompt is continued as written, without the chat template. With `stream: true` the answer is `text/event-stream`: `data: {text_completion}` frames ending with `data: [DONE]`.",
  tags: ["Completions"],
};

export const completionsRoutes = (deps: AppDeps) =>
  generationRoutes({ name: "completions", path: "/v1/completions", body: CompletionRequest, answer: Completion, detail: DETAIL, create: (body, call) => createCompletion(deps, body, call) });
