// A chat completion run in a chosen service tier through the chat service itself, as a batch line's runner calls it
// (CallContext.tier): the request field `service_tier` is parsed elsewhere, and this reaches the same admission.
import { createChatCompletion } from "../../src/api/chat/service.ts";
import type { ChatCompletionBody, ChatRequestBody } from "../../src/api/chat/schema.ts";
import type { AppDeps } from "../../src/app-deps.ts";
import { authenticate } from "../../src/auth/authenticate.ts";
import { newRequestId } from "../../src/http/request-id.ts";
import type { ServiceTier } from "../../src/inference/service-tier.ts";

/** Runs `body` (non-streaming) for the key's team in `tier`; resolves to the request id and the completion. */
export async function chatInTier(deps: AppDeps, key: string, tier: ServiceTier, body: object): Promise<{ requestId: string; completion: ChatCompletionBody }> {
  const auth = await authenticate(deps.db, new Headers({ authorization: `Bearer ${key}` }));
  const requestId = newRequestId();
  const completion = await createChatCompletion(deps, body as ChatRequestBody, { auth, requestId, signal: new AbortController().signal, tier });
  if (completion instanceof Response) throw new Error("a non-streaming body was answered with a stream");
  return { requestId, completion };
}
