// The Responses side of the built-in web_search tool, answer half: a core builtin_call block of web_search as a
// web_search_call item (ws_ id, action {type: "search", query, sources}) with its stream events, and the
// url_citation annotations of the answer written after the searches.
import type { BlockHead } from "../../inference/blocks.ts";
import type { BuiltinResult } from "../../inference/builtin-tool.ts";
import { ApiError } from "../../errors/api-error.ts";
import { citationsFor } from "../../tools/citations.ts";
import { type NumberedSource, queryOf, sourcesOf, WEB_SEARCH_FUNCTION } from "../../tools/web-search.ts";
import { newWebSearchCallId } from "./ids.ts";
import type { ResponseEvent } from "./response-event.ts";

type Json = Record<string, unknown>;
type Ref = { item_id: unknown; output_index: number };

/** The output item of a built-in call; web_search is the only built-in tool Responses offers. */
export function builtinItem(head: Extract<BlockHead, { kind: "builtin_call" }>): Json {
  if (head.name !== WEB_SEARCH_FUNCTION) throw ApiError.internal();
  return { id: newWebSearchCallId(), type: "web_search_call", status: "in_progress", action: { type: "search", query: queryOf(head.arguments) ?? "" } };
}

/** The events of a search being run: it is in progress, then searching (kiln has no queueing step between). */
export function searchStarted(ref: Ref): ResponseEvent[] {
  return [{ type: "response.web_search_call.in_progress", ...ref }, { type: "response.web_search_call.searching", ...ref }];
}

/** Sets the item's final status and sources; a search that failed has no completed event, only its item done. */
export function searchEnded(item: Json, result: BuiltinResult | undefined, ref: Ref): ResponseEvent[] {
  if (result?.status !== "completed") {
    item.status = "failed";
    return [];
  }
  item.status = "completed";
  (item.action as Json).sources = sourcesOf(result).map((s) => ({ type: "url", url: s.url }));
  return [{ type: "response.web_search_call.completed", ...ref }];
}

/**
 * Annotates a finished output_text part with citations of `sources` and returns the annotation.added events;
 * the annotations then travel with the part in content_part.done, output_item.done and the response.
 */
export function annotate(part: Json, text: string, sources: readonly NumberedSource[], ref: Ref): ResponseEvent[] {
  const annotations = citationsFor(text, sources);
  part.annotations = annotations;
  return annotations.map((annotation, i) => ({ type: "response.output_text.annotation.added", ...ref, content_index: 0, annotation_index: i, annotation }));
}
