// How a prompt that opened a thinking block runs: the close marker the worker watches for, what the worker writes
// after it (the template's framing, then a forced call's opening, so the model thinks first and the call still
// comes out whole), and the budget after which the worker closes the block itself.
import type { OutputConstraint, ThinkingBudget } from "../protocol/text.ts";
import type { PromptFormat } from "./prompt-format.ts";
import type { ModelTokenizer } from "./tokenizer.ts";

/** Reasoning switched off by the request (`enable_thinking: false`): then no answer may carry a thinking block. */
export const reasoningOff = (templateOptions: Record<string, unknown> | undefined) => templateOptions?.enable_thinking === false;

/**
 * The ids never sampled when reasoning is off: the thinking open marker when it is one token, so the model cannot
 * open a block after answering either. (A marker of several tokens is not read as one then: its text stays answer text.)
 */
export function bannedWhenOff(tok: Pick<ModelTokenizer, "encodeText">, thinking: PromptFormat["thinking"]): number[] {
  const ids = thinking ? tok.encodeText(thinking.open) : [];
  return ids.length === 1 ? ids : [];
}

/** True when the rendered prompt ends inside an opened thinking block (a template's enable_thinking did that). */
export function opensThinking(rendered: string, thinking: PromptFormat["thinking"]): boolean {
  return !!thinking && rendered.trimEnd().endsWith(thinking.open);
}

/** A thinking block's close as the template frames it (`\n</think>\n\n`), with `then` after it. */
export const closeFraming = (close: string, then = "") => `\n${close}\n\n${then}`;

/** The close of a thinking block as the worker writes it: the whole text's ids, and the close marker's one id. */
export interface ThinkingClose {
  closeTokenId: number;
  /** `\n</think>\n\n` plus what must follow it (a forced call's opening), as the worker forces it at the budget. */
  forceIds: number[];
  /** What follows the close marker in `forceIds`: forced when the model closed the block itself. */
  framingIds: number[];
}

/**
 * The close for a format whose close marker is one token (so the worker can see the model write it), with `then`
 * written after the template's framing; null when the marker is several tokens or the format has none.
 */
export function thinkingClose(tok: Pick<ModelTokenizer, "encodeText" | "format">, then = ""): ThinkingClose | null {
  const close = tok.format.thinking?.close;
  const ids = close ? tok.encodeText(close) : [];
  if (ids.length !== 1) return null;
  const forceIds = tok.encodeText(closeFraming(close!, then));
  const at = forceIds.indexOf(ids[0]!);
  return { closeTokenId: ids[0]!, forceIds, framingIds: at < 0 ? [] : forceIds.slice(at + 1) };
}

/**
 * The thinking tokens a sequence may spend. When the answer after the block is held to a grammar (a forced call, a
 * JSON format), thinking gets at most half the output budget, whatever was asked: a block that ran to the token
 * limit would leave no room for the answer the request requires.
 */
export function thinkingTokens(requested: number | undefined, maxTokens: number, answerConstrained: boolean): number | undefined {
  if (!answerConstrained) return requested;
  const half = Math.floor(maxTokens / 2);
  return requested === undefined ? half : Math.min(requested, half);
}

export const budgetOf = (c: ThinkingClose, budget: number): ThinkingBudget => ({ budget, closeTokenId: c.closeTokenId, forceIds: c.forceIds });

export const startAfterOf = (c: ThinkingClose): NonNullable<OutputConstraint["startAfter"]> => ({ tokenId: c.closeTokenId, framingIds: c.framingIds });
