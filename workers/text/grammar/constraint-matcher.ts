// One constrained row's position in its grammar: which tokens may come next, and the advance by the sampled one.
import type * as xg from "@mlc-ai/web-xgrammar";
import { byteLevelDecoderTable } from "../token-bytes.ts";
import type { GrammarVocab } from "./grammar-vocab.ts";
import { countAllowed, isAllowed, maskWords } from "./token-mask.ts";
import { advanceUtf8, pendingLead, UTF8_START, type Utf8State } from "./utf8-guard.ts";

const CHAR_TO_BYTE = byteLevelDecoderTable();
const bytesOf = (byteLevel: string) => Array.from(byteLevel, (ch) => CHAR_TO_BYTE.get(ch)!);

export class ConstraintMatcher {
  private utf8: Utf8State = UTF8_START;
  private disposed = false;

  constructor(
    private readonly m: xg.GrammarMatcher,
    private readonly vocab: GrammarVocab,
    /** The ids that end this row once its JSON is complete. */
    readonly stopIds: readonly number[],
  ) {}

  /**
   * Writes the allowed next tokens into `mask` (bit `id & 31` of word `id >> 5` set = allowed; at least
   * ceil(vocab / 32) words) and returns how many are allowed. Stop ids are allowed exactly when the JSON is
   * complete. Asynchronous only because xgrammar's binding is: the engine can run it while the model runs.
   */
  async fillMask(mask: Uint32Array): Promise<number> {
    this.live();
    const words = maskWords(this.vocab.size);
    if (mask.length < words) throw new Error(`mask has ${mask.length} words; the vocabulary needs ${words}`);
    const bits = await this.m.getNextTokenBitmask();
    mask.set(new Uint32Array(bits.buffer, bits.byteOffset, words));
    const lead = pendingLead(this.utf8);
    if (lead >= 0) {
      const refused = this.vocab.utf8Refusals.get(lead)!;
      for (let w = 0; w < words; w++) mask[w]! &= ~refused[w]!;
    }
    return countAllowed(mask, this.vocab.size);
  }

  /**
   * Advances by `tokenId`. Returns false, and stays where it was, when the token is not allowed here (a
   * sampler that honoured the mask never does that). Accepting a stop id ends the row (`done`).
   */
  accept(tokenId: number): boolean {
    this.live();
    if (!(Number.isInteger(tokenId) && tokenId >= 0 && tokenId < this.vocab.size)) return false;
    const text = this.vocab.byteLevel[tokenId]!;
    // Tokens without text are never JSON, and only this row's stop ids may end it (xgrammar would also take
    // the vocabulary's own stop ids here, though its mask leaves them out when the row has its own).
    if (text === "" && !this.stopIds.includes(tokenId)) return false;
    const utf8 = advanceUtf8(this.utf8, bytesOf(text));
    if (!utf8 || !this.m.acceptToken(tokenId)) return false;
    this.utf8 = utf8;
    return true;
  }

  /** Whether the output so far is one whole valid JSON value (so the row may stop here). */
  isComplete(): boolean {
    this.live();
    if (this.m.isTerminated()) return true;
    // Trying the stop token and undoing it asks the grammar directly, without building a whole mask.
    if (!this.m.acceptToken(this.stopIds[0]!)) return false;
    this.m.rollBack(1);
    return true;
  }

  /** Whether a stop id was accepted: nothing more may follow. */
  get done(): boolean {
    this.live();
    return this.m.isTerminated();
  }

  /**
   * The text that must come next whatever the model chooses (e.g. the rest of a property name), for
   * jump-forward decoding: whole characters only, "" when nothing is forced or the row sits inside a UTF-8
   * character. Found byte by byte through the single-byte tokens and undone afterwards, because xgrammar's
   * own jump-forward string is decoded past its end when it stops inside a character (a wrong last character).
   */
  async forcedText(maxBytes = 256): Promise<string> {
    this.live();
    if (this.utf8.need > 0 || this.m.isTerminated()) return "";
    const mask = new Uint32Array(maskWords(this.vocab.size));
    const saved = this.utf8;
    const bytes: number[] = [];
    try {
      while (bytes.length < maxBytes) {
        await this.fillMask(mask);
        if (this.stopIds.some((id) => isAllowed(mask, id))) break;
        let only = -1;
        for (let b = 0; b < 256 && only !== -2; b++) {
          const id = this.vocab.byteTokens[b]!;
          if (id >= 0 && isAllowed(mask, id)) only = only === -1 ? b : -2;
        }
        if (only < 0 || !this.accept(this.vocab.byteTokens[only]!)) break;
        bytes.push(only);
      }
    } finally {
      if (bytes.length > 0) this.m.rollBack(bytes.length);
      this.utf8 = saved;
    }
    // Drop a character the forced bytes only begin.
    let end = bytes.length;
    for (let i = Math.max(0, end - 3); i < end; i++) {
      const b = bytes[i]!;
      const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (b >= 0xc0 && i + len > end) end = i;
    }
    return new TextDecoder().decode(Uint8Array.from(bytes.slice(0, end)));
  }

  /** Frees the matcher's WebAssembly memory; the matcher is unusable afterwards. Safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.m.dispose();
  }

  private live(): void {
    if (this.disposed) throw new Error("the constraint matcher was disposed");
  }
}
