// Which replayed reasoning reaches the prompt as the model's own thinking: only text kiln made, opened from its seal
// (encrypted_content) or read from kiln's own store by the item's id. Any other reasoning item still counts for the
// input rules but adds nothing to the prompt: its plain text is the client's word, not the model's.
import { SealError, type Sealer } from "../../crypto/sealing.ts";
import { type InputPath, itemError, type ResponsesInputItem } from "./to-conversation.ts";

type Json = Record<string, unknown>;

export interface ReasoningSources {
  sealer: Sealer;
  model: string;
  /** The text of each of these reasoning items kiln stored (for the caller's team and this model); others are absent. */
  stored(ids: string[]): Map<string, string>;
}

/** A reasoning item's text as kiln wrote it: its content parts, or its summary parts when it has no content. */
export function reasoningText(item: Json): string {
  const parts = ((item.content as Json[] | undefined)?.length ? item.content : (item.summary ?? [])) as { text: string }[];
  return parts.map((p) => p.text).join("\n\n");
}

/** The texts of a stored response's reasoning output items among `ids`, by id. */
export function reasoningTexts(output: Json[], ids: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of output) if (item.type === "reasoning" && ids.has(String(item.id))) out.set(String(item.id), reasoningText(item));
  return out;
}

/**
 * Each reasoning item kiln vouches for, with its text: a sealed one opened, an unsealed one by its id from the store
 * (the stored text, whatever the client sent with it). A seal that does not open is a 400 naming the item, unless kiln
 * vouches for the item otherwise: one whose id is in the store replays the stored text, and one deep in the
 * previous_response_id chain (accepted when it was sent, its seal now of an older format) adds nothing.
 */
export function trustedReasoning(items: readonly ResponsesInputItem[], src: ReasoningSources, path: InputPath): Map<ResponsesInputItem, string> {
  const out = new Map<ResponsesInputItem, string>();
  const byId: [ResponsesInputItem, string][] = [];
  const unopened: number[] = [];
  items.forEach((item, i) => {
    if (item.type !== "reasoning") return;
    if (item.encrypted_content) {
      try {
        out.set(item, src.sealer.open(item.encrypted_content, src.model));
        return;
      } catch (e) {
        if (!(e instanceof SealError)) throw e;
        unopened.push(i);
      }
    }
    if (item.id) byId.push([item, item.id]);
  });
  const stored = byId.length ? src.stored(byId.map(([, id]) => id)) : new Map<string, string>();
  for (const [item, id] of byId) {
    const text = stored.get(id);
    if (text !== undefined) out.set(item, text);
  }
  const refused = unopened.find((i) => !out.has(items[i]!) && path(i) !== null);
  if (refused !== undefined) throw itemError(path, refused, "encrypted_content", "could not be verified: it was changed, cut, or sealed for another model or server.");
  return out;
}
