// POST /v1/messages and POST /v1/messages/count_tokens (Anthropic Messages-compatible; errors carry `type: "error"`).
import { t } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { POLICY } from "../../http/edge-policy.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { generationRoutes, modelCallErrors } from "../generation-routes.ts";
import { CountTokensObject, MessageObject, MessagesRequest } from "./schema.ts";
import { countMessageTokens, createMessage } from "./service.ts";

const MessagesError = t.Composite([t.Object({ type: t.Literal("error") }), ErrorBody]);
const errors = modelCallErrors(MessagesError);
/** max_tokens is required by this format, unlike the others; a count_tokens body does not need it. */
const CountRequest = t.Composite([t.Omit(MessagesRequest, ["max_tokens"]), t.Object({ max_tokens: t.Optional(t.Integer({ minimum: 1 })) })], { additionalProperties: true });

export function messagesRoutes(deps: AppDeps) {
  return generationRoutes({
    name: "messages",
    path: "/v1/messages",
    body: MessagesRequest,
    answer: MessageObject,
    error: MessagesError,
    create: (body, call) => createMessage(deps, body, call),
    detail: {
      summary: "Create a message",
      description:
        "Anthropic Messages-compatible generation (keys as `x-api-key` or `Authorization: Bearer`; `anthropic-version` is accepted). " +
        "With `stream: true`: `event:` lines equal to each frame's type (message_start, content_block_start/delta/stop, message_delta, message_stop, ping, error). " +
        'Errors here carry `"type": "error"` at the top level besides the usual error object.',
      tags: ["Messages"],
    },
  })
    .post("/v1/messages/count_tokens", ({ body, auth, request }) => countMessageTokens(deps, body as typeof MessagesRequest.static, auth, { clientSignal: request.signal, timeoutMs: deps.config.requestTimeoutMs }), {
      edge: POLICY.keyedJson,
      body: CountRequest,
      // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
      parse: "json",
      response: { 200: CountTokensObject, ...errors },
      detail: { summary: "Count a message request's input tokens", description: "The input tokens the same POST /v1/messages request is billed.", tags: ["Messages"] },
    });
}
