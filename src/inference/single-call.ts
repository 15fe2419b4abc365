// parallel_tool_calls: false as the worker keeps it: the ids of the model's tool-call markers (those that are one
// token), whether the prompt already opened the call, and the thinking close before which markers mean nothing.
import type { SingleCall } from "../protocol/text.ts";
import type { Markers } from "./prompt-format.ts";
import type { ModelTokenizer } from "./tokenizer.ts";

/**
 * The worker's rule for at most one call, or undefined when it could keep none (neither marker is one token): the
 * output parser then keeps the first call only, and the model may write on after it.
 */
export function singleCallRule(tok: Pick<ModelTokenizer, "encodeText">, marks: Markers, o: { opened: boolean; startAfter?: number }): SingleCall | undefined {
  const one = (text: string) => {
    const ids = tok.encodeText(text);
    return ids.length === 1 ? ids[0] : undefined;
  };
  const openId = one(marks.open);
  const closeId = one(marks.close);
  if (openId === undefined && closeId === undefined) return undefined;
  return {
    ...(openId !== undefined ? { openId } : {}),
    ...(closeId !== undefined ? { closeId } : {}),
    ...(o.opened ? { opened: true } : {}),
    ...(o.startAfter !== undefined ? { startAfter: o.startAfter } : {}),
  };
}
