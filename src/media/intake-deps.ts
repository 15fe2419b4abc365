// What media intake (intake.ts, intake-read.ts) is built from: the decoder, the fetcher, the team's files, the
// server's byte budget, the content policy and the limits. media-intake.ts builds it from kiln's parts; tests build
// it from in-memory ones.
import type { DecodedMedia, Medium } from "../inference/media.ts";
import type { ContentPolicy } from "./content-policy.ts";
import type { IntakeBudget } from "./intake-budget.ts";

/** Who is asking: files are the team's, and the key must be allowed to use them. */
export interface Caller {
  teamId: number;
  keyId: number;
}

/** A stored file opened by id: its size is known from the storage's record before any byte is read. */
export interface OpenedFile {
  size: number;
  /** The first `n` bytes (all of a shorter file), by a ranged read. */
  head(n: number): Promise<Uint8Array>;
  /** The whole file, streamed into one buffer. */
  bytes(signal?: AbortSignal): Promise<Uint8Array>;
}

export interface IntakeDeps {
  /** Decodes off the event loop (src/media/decode/). */
  decode(bytes: Uint8Array, want: Medium | "any", signal: AbortSignal): Promise<DecodedMedia>;
  /** Fetches under the fetch policy, at most `fetchMaxBytes`; throws FetchRefusal. */
  fetch(url: string, signal: AbortSignal): Promise<Uint8Array>;
  /**
   * A file of the caller's team, at most `maxBytes`, opened if the caller's key may use files; throws ApiError (403
   * without the files permission, 404 file_not_found, or 400 above the size).
   */
  openFile(who: Caller, fileId: string, maxBytes: number): Promise<OpenedFile>;
  /** The server's media bytes in flight (KILN_INTAKE_BUDGET_BYTES): each item's size is reserved before it is read. */
  budget: IntakeBudget;
  policy: ContentPolicy;
  /** Inline (base64) media above this many decoded bytes are refused: the spec's 50 MB. */
  inlineMaxBytes: number;
  /** Uploaded files above this many bytes are not decoded. */
  fileMaxBytes: number;
  /** The most a fetched medium may be: what a fetch reserves of the budget until its size is known. */
  fetchMaxBytes: number;
  /** Most media parts one request may carry. */
  maxParts: number;
  /** Most bytes of media (all items together) one request may bring. */
  maxTotalBytes: number;
}
