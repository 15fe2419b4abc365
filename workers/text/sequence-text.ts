// Per-sequence incremental detokenizer: UTF-8-safe text deltas, stop token ids and silent (markup) ids suppressed,
// stop sequences matched.
import { StopMatcher } from "./stop-matcher.ts";

export interface TextStep {
  /** Text safe to emit after this token (often "", never a split character or a possible stop prefix). */
  text: string;
  /** Set when the token is one of the stop token ids (it adds no text). */
  stopToken?: boolean;
  /** Set when a stop sequence completed; `text` ends right before it. */
  stopSequence?: string;
}

export class SequenceText {
  // Streaming mode keeps an incomplete multi-byte character inside the decoder until its last byte arrives.
  private readonly utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  private readonly stops: StopMatcher;
  private readonly stopIds: Set<number>;
  private readonly silentIds: Set<number>;

  constructor(private readonly tokenBytes: (id: number) => Uint8Array, stops: readonly string[], stopTokenIds: readonly number[], silentTokenIds: readonly number[] = []) {
    this.stops = new StopMatcher(stops);
    this.stopIds = new Set(stopTokenIds);
    this.silentIds = new Set(silentTokenIds);
  }

  /** `matchStops` false: text stop sequences are not looked for (inside constrained JSON they would cut it). */
  push(id: number, matchStops = true): TextStep {
    if (this.stopIds.has(id)) return { text: "", stopToken: true };
    if (this.silentIds.has(id)) return { text: "" };
    const decoded = this.utf8.decode(this.tokenBytes(id), { stream: true });
    if (!matchStops) return { text: this.stops.flush() + decoded };
    if (decoded === "") return { text: "" };
    const r = this.stops.push(decoded);
    return r.stop === undefined ? { text: r.emit } : { text: r.emit, stopSequence: r.stop };
  }

  /** Text still held back when the sequence ends for a reason other than a stop sequence; an unfinished character is dropped. */
  end(): string {
    return this.stops.flush();
  }
}
