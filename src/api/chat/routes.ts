// POST /v1/chat/completions.
import type { AppDeps } from "../../app-deps.ts";
import { generationRoutes } from "../generation-routes.ts";
import { ChatCompletion, ChatRequest } from "./schema.ts";
import { createChatCompletion } from "./service.ts";

/** The OpenAPI entry of the route. */
const DETAIL = {
  summary: "Create a chat completion",
  description: "OpenAI-compatible. With `stream: true` the answer is `text/event-stream`: `data: {chat.completion.chunk}` frames ending with `data: [DONE]`.",
  tags: ["Chat"],
};

export const chatRoutes = (deps: AppDeps) =>
  generationRoutes({ name: "chat", path: "/v1/chat/completions", body: ChatRequest, answer: ChatCompletion, detail: DETAIL, create: (body, call) => createChatCompletion(deps, body, call) });
