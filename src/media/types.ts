// The named reasons a medium is refused: fetching (fetch-policy), decoding (decode/) and intake (intake.ts) share
// them. What a decoded medium is lives in the core (src/inference/media.ts), which the conversation carries.

/**
 * Why a medium could not be decoded. Each reason has its own message, without the item's name: intake prefixes it
 * (`input[0].content[1]: ...`).
 */
export type DecodeFailure =
  | "empty" // zero bytes
  | "unknown_format" // no decoder recognises the bytes
  | "corrupt" // recognised but broken
  | "truncated" // recognised, ends early
  | "too_many_pixels" // header says more pixels than the limit (decompression bomb), refused before decoding
  | "no_audio_track" // a container without audio, asked for audio
  | "not_image" // asked for an image, got another medium
  | "too_long"; // longer than the duration cap

export class MediaDecodeError extends Error {
  constructor(readonly reason: DecodeFailure, message: string) {
    super(message);
  }
}

/** Why a remote URL was not fetched; each reason's message names the failure. */
export type FetchFailure =
  | "bad_url" // not http(s), malformed, credentials in it, too long
  | "blocked" // fetch policy: a forbidden address (loopback, private, link-local, CGNAT, multicast, metadata) or not on the allow-list
  | "dns" // the name does not resolve
  | "unreachable" // connect failed, reset, or an error status
  | "timeout"
  | "robots" // robots.txt disallows it
  | "too_large" // more bytes than the cap
  | "redirects"; // more redirects than the cap

export class FetchRefusal extends Error {
  constructor(readonly reason: FetchFailure, message: string) {
    super(message);
  }
}
