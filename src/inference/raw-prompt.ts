// A prompt that skips the chat template (the legacy completions format): its text tokenized as written, or token ids
// taken as they are once checked against the vocabulary.
import { ApiError } from "../errors/api-error.ts";
import { checkPromptBound } from "./context.ts";
import { type ModelTokenizer, OFF_THREAD_BYTES } from "./tokenizer.ts";

type Tok = Pick<ModelTokenizer, "encodePrompt" | "minTokens" | "vocabSize">;

/** The prompt's token ids; an empty prompt, or an id the tokenizer does not have, is a 400 naming `prompt`. */
export async function rawPromptIds(tokenizer: Tok, raw: string | number[], maxTokens: number | null, contextLength: number): Promise<number[]> {
  if (typeof raw !== "string") {
    const unknown = raw.filter((id) => id >= tokenizer.vocabSize);
    if (unknown.length) {
      throw ApiError.badRequest(`prompt names token ids the model's tokenizer does not have (its ids are 0 to ${tokenizer.vocabSize - 1}): ${unknown.slice(0, 5).join(", ")}.`, "prompt");
    }
    if (!raw.length) throw ApiError.badRequest("prompt is empty: the model needs at least one token to continue.", "prompt");
    return raw;
  }
  // A huge text that cannot fit is refused from its byte count, as a chat prompt is.
  if (raw.length > OFF_THREAD_BYTES) checkPromptBound(tokenizer.minTokens(raw), maxTokens, contextLength);
  const ids = await tokenizer.encodePrompt(raw);
  if (!ids.length) throw ApiError.badRequest("prompt is empty: the model needs at least one token to continue.", "prompt");
  return ids;
}
