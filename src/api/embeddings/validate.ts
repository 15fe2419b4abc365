// Checks an embeddings request beyond its schema: the inputs as a list (none empty, at most MAX_INPUTS), each one's
// tokens within the model's context and vocabulary, and `dimensions` against the sizes the model was trained for.
import { ApiError } from "../../errors/api-error.ts";
import type { EmbeddingLayout } from "../../models/embedding-layout.ts";

/** Inputs one request may carry, as OpenAI's endpoint allows. */
export const MAX_INPUTS = 2048;

const bad = (message: string, param: string) => ApiError.badRequest(message, param);

/** The input field as a list of inputs, each text or token ids; throws naming `input` when empty or too many. */
export function inputList(input: string | string[] | number[] | number[][]): (string | number[])[] {
  const list: (string | number[])[] = typeof input === "string" ? [input] : input.length > 0 && input.every((x) => typeof x === "number") ? [input as number[]] : (input as (string | number[])[]);
  if (list.length === 0) throw bad("input must not be empty: send at least one string or token id array.", "input");
  if (list.length > MAX_INPUTS) throw bad(`input has ${list.length} items, but one request takes at most ${MAX_INPUTS}.`, "input");
  const empty = list.findIndex((x) => x.length === 0);
  if (empty >= 0) throw bad(`input[${empty}] is empty: every input needs at least one character or token.`, "input");
  return list;
}

/** Throws naming `input` when a tokenized input is longer than the context or names a token the model does not have. */
export function checkRows(rows: number[][], contextLength: number, vocabSize: number): void {
  rows.forEach((row, i) => {
    if (row.length > contextLength) {
      throw bad(`input[${i}] is ${row.length} tokens, but this model's maximum context length is ${contextLength} tokens. Shorten or split it.`, "input");
    }
    const unknown = row.find((id) => id >= vocabSize);
    if (unknown !== undefined) throw bad(`input[${i}] has token id ${unknown}, but this model's vocabulary ends at ${vocabSize - 1}.`, "input");
  });
}

/** The size each vector is returned at: the model's own, or `dimensions` when the model was trained to be cut there. */
export function outputDimensions(layout: EmbeddingLayout, dimensions: number | null | undefined, model: string): number {
  if (dimensions == null || dimensions === layout.dimensions) return layout.dimensions;
  const smallest = layout.truncations[0]!;
  if (smallest === layout.dimensions) {
    throw bad(`The model '${model}' was not trained for shorter vectors: dimensions must be ${layout.dimensions} or left out.`, "dimensions");
  }
  if (dimensions < smallest || dimensions > layout.dimensions) {
    throw bad(`dimensions must be from ${smallest} to ${layout.dimensions} for the model '${model}' (trained at ${layout.truncations.join(", ")}).`, "dimensions");
  }
  return dimensions;
}
