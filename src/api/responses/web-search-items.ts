// The Responses side of the built-in web_search tool, answer half: a core web_search_call block as a
// web_search_call item (ws_ id, action {type: "search", query, sources}) with its stream events, and the
// url_citation annotations of the answer written after the searches.
import type { SearchOutcome } from "../../inference/blocks.ts";
import { newWebSearchCallId } from "../../inference/ids.ts";
import { citationsFor } from "../../tools/citations.ts";
import type { NumberedSource } from "../../tools/web-search.ts";
import type { ResponseEvent } from "./response-event.ts";

type Json = Record<string, unknown>;
type Ref = { item_id: unknown; output_index: number };

export function webSearchItem(query: string): Json {
  return { id: newWebSearchCallId(), type: "web_search_call", status: "in_progress", action: { type: "search", query } };
}

/** The events of a search being run: it is in progress, then searching (kiln has no queueing step between). */
export function searchStarted(ref: Ref): ResponseEvent[] {
  return [{ type: "response.web_search_call.in_progress", ...ref }, { type: "response.web_search_call.searching", ...ref }];
}

/** Sets the item's final status and sources; a search that failed has no completed event, only its item done. */
export function searchEnded(item: Json, outcome: SearchOutcome | undefined, ref: Ref): ResponseEvent[] {
  if (outcome?.status !== "completed") {
    item.status = "failed";
    return [];
  }
  item.status = "completed";
  (item.action as Json).sources = outcome.sources.map((s) => ({ type: "url", url: s.url }));
  return [{ type: "response.web_search_call.completed", ...ref }];
}

/** The sources a search gave, to be cited by the text that follows. */
export const sourcesOf = (outcome: SearchOutcome | undefined): NumberedSource[] => (outcome?.status === "completed" ? outcome.sources : []);

/**
 * Annotates a finished output_text part with citations of `sources` and returns the annotation.added events;
 * the annotations then travel with the part in content_part.done, output_item.done and the response.
 */
export function annotate(part: Json, text: string, sources: readonly NumberedSource[], ref: Ref): ResponseEvent[] {
  const annotations = citationsFor(text, sources);
  part.annotations = annotations;
  return annotations.map((annotation, i) => ({ type: "response.output_text.annotation.added", ...ref, content_index: 0, annotation_index: i, annotation }));
}
