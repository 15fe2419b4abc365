// An input file that no media decoder recognises but is UTF-8 text is a document for the prompt. Whether it is one,
// and whether it may fit, is decided from its first bytes and its stored size before the rest of it is read.
import { ApiError } from "../errors/api-error.ts";

/** A text document larger than this fits no model's context: refused before it reaches the prompt. */
export const MAX_TEXT_DOCUMENT_BYTES = 4 * 1024 * 1024;

/**
 * Whether `head`, the first bytes of a file, reads as UTF-8 text (no NUL); `whole` says it is the whole file, else a
 * multi-byte character cut at its end still counts as text.
 */
export function looksLikeText(head: Uint8Array, whole: boolean): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: !whole });
    return true;
  } catch {
    return false;
  }
}

/**
 * An input file no media decoder recognises that is UTF-8 text (no NUL) is a document: its text, framed with its
 * name, for the prompt. null otherwise.
 */
export function textDocument(bytes: Uint8Array, filename: string | undefined): string | null {
  if (bytes.includes(0)) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  return `<file${filename ? ` name=${JSON.stringify(filename)}` : ""}>\n${text}\n</file>`;
}

/** The 400 for a text document of `size` bytes at item `at`, when it is larger than a prompt takes; null otherwise. */
export function oversizeDocument(size: number, at: string): ApiError | null {
  if (size <= MAX_TEXT_DOCUMENT_BYTES) return null;
  return ApiError.badRequest(`${at} is a text document of ${size} bytes; at most ${MAX_TEXT_DOCUMENT_BYTES} fit a prompt.`, at);
}
