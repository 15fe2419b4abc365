// GET / DELETE /v1/responses/{id}, POST …/cancel and GET …/input_items: reads and changes of stored responses, always
// scoped to the caller's team (another team's id is an unknown id), and the resumable event stream.
import type { AppDeps } from "../../app-deps.ts";
import { deleteResponse, findResponse, pageInputItems, type ResponseRow, TERMINAL } from "../../db/responses-repo.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import { type StreamEnd, sseResponse } from "../../http/sse-writer.ts";
import { cancelElsewhere } from "../../live/cancel-shared.ts";
import { followResponse } from "../../live/follow.ts";
import { reasoningText } from "./reasoning.ts";
import { endStored } from "./stored.ts";
import { checkInclude, ENCRYPTED_REASONING } from "./validate.ts";

type Json = Record<string, unknown>;

function notFound(id: string): ApiError {
  return ApiError.notFound(`Response with id '${clip(id)}' not found.`, "response_id");
}

async function stored(deps: AppDeps, id: string, teamId: number): Promise<ResponseRow> {
  const row = await findResponse(deps.db, id, teamId);
  if (!row) throw notFound(id);
  return row;
}

/** Seals each reasoning item's text for replay, as `include: ["reasoning.encrypted_content"]` asks. */
function withEncryptedReasoning(deps: AppDeps, response: Json): Json {
  const output = (response.output as Json[]).map((item) => {
    if (item.type !== "reasoning") return item;
    return { ...item, encrypted_content: deps.sealer.seal(reasoningText(item), String(response.model)) };
  });
  return { ...response, output };
}

export interface RetrieveQuery {
  include?: string[];
  stream?: boolean;
  starting_after?: number;
}

export async function retrieveResponse(deps: AppDeps, id: string, teamId: number, q: RetrieveQuery, streamCtx: Omit<FollowOptions, "teamId">): Promise<Json | Response> {
  const row = await stored(deps, id, teamId);
  checkInclude(q.include ?? []);
  if (q.stream) {
    const request = JSON.parse(row.requestJson) as { stream?: boolean | null };
    if (!row.background && !request.stream) {
      throw ApiError.badRequest(`Response '${clip(id)}' was neither streamed nor run in the background, so it has no events to stream; retrieve it without stream.`, "stream");
    }
    return followStream(deps, id, q.starting_after ?? -1, { ...streamCtx, teamId });
  }
  const response = JSON.parse(row.responseJson) as Json;
  return q.include?.includes(ENCRYPTED_REASONING) ? withEncryptedReasoning(deps, response) : response;
}

export interface FollowOptions {
  /** A stored stream's own client leaving cancels it; a background job and every resumed stream go on. */
  abortOnLeave: boolean;
  /** The response's team. */
  teamId: number;
  requestId: string;
  onStreamEnd?: (end: StreamEnd) => void;
}

export function followStream(deps: AppDeps, id: string, after: number, o: FollowOptions): Response {
  const left = new AbortController();
  return sseResponse({
    frames: followResponse(deps.db, deps.live, id, after, { teamId: o.teamId, draining: () => deps.shutdown.draining, signal: left.signal }),
    // A background job may wait queued, silent, for a long time: comment lines keep proxies from closing the stream.
    // A stored stream's own client waits as an unstored one does, without them (a timer per frame is not free).
    heartbeatMs: o.abortOnLeave ? undefined : 15_000,
    crashFrame: (e) => {
      deps.logger.error("unhandled exception", { request_id: o.requestId, error: String(e) });
      return { event: "error", data: JSON.stringify({ type: "error", code: "server_error", message: ApiError.internal().message, param: null }) };
    },
    onClose: (end) => {
      left.abort();
      if (o.abortOnLeave && end.outcome === "client_gone") deps.live.abort(id, "client_gone");
      o.onStreamEnd?.(end);
    },
  });
}

export async function deleteStoredResponse(deps: AppDeps, id: string, teamId: number): Promise<{ id: string; object: "response"; deleted: true }> {
  const row = await stored(deps, id, teamId);
  // A job still running stops first, so nothing writes to the rows being deleted (on another replica: the cancel is
  // sent, and its writes stop at the first one that finds the row gone).
  const bus = deps.live.bus;
  if (!deps.live.abort(row.id, "cancelled") && bus && !TERMINAL.has(row.status)) await bus.cancel(row.id);
  if (!(await deleteResponse(deps.db, id, teamId))) throw notFound(id);
  return { id, object: "response", deleted: true };
}

/** How long a cancel waits for its job to stop before answering with the response as it stands. */
export const CANCEL_WAIT_MS = 5_000;

/**
 * Cancels a background response that is queued or running: it ends cancelled within one generation step, and the
 * returned object says so. A job that has not stopped within CANCEL_WAIT_MS (its worker stuck) comes back as it
 * stands and ends cancelled once its run stops. A finished one comes back unchanged; one that is not background is a 400.
 * One not running in this process, with replicas sharing a bus, is cancelled through it (cancel-shared.ts).
 */
export async function cancelStoredResponse(deps: AppDeps, id: string, teamId: number): Promise<Json> {
  const row = await stored(deps, id, teamId);
  if (!row.background) throw ApiError.badRequest(`Response '${clip(id)}' is not a background response; only background responses can be cancelled.`, "response_id");
  if (TERMINAL.has(row.status)) return JSON.parse(row.responseJson) as Json;
  const bus = deps.live.bus;
  if (bus && !deps.live.isLive(id)) {
    const ended = await cancelElsewhere(bus, row, CANCEL_WAIT_MS, () => stored(deps, id, teamId), (r) => endStored(deps, r, { status: "cancelled" }));
    return JSON.parse(ended.responseJson) as Json;
  }
  // The job ends within one step; its final row is what the client gets. (A job that ended just now is not live.)
  deps.live.abort(id, "cancelled");
  await deps.live.ended(id, CANCEL_WAIT_MS);
  const after = await stored(deps, id, teamId);
  // A row whose run is gone without a final write (a failed write) is ended here.
  if (!TERMINAL.has(after.status) && !deps.live.isLive(id)) await endStored(deps, after, { status: "cancelled" });
  return JSON.parse((await stored(deps, id, teamId)).responseJson) as Json;
}

export interface ItemsQuery {
  order?: "asc" | "desc";
  after?: string;
  limit?: number;
}

export async function listInputItems(deps: AppDeps, id: string, teamId: number, q: ItemsQuery) {
  await stored(deps, id, teamId);
  const page = await pageInputItems(deps.db, id, { order: q.order ?? "desc", after: q.after ?? null, limit: q.limit ?? 20 });
  if (!page) throw ApiError.notFound(`No input item with id '${clip(q.after!)}' in response '${clip(id)}'.`, "after");
  const data = page.items.map((s) => ({ ...s.item, id: s.itemId }));
  return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
}
