// How many bytes of a Responses input are inline media (data URLs, file_data, input_audio data): the part of a too-large
// stored response the Files API would take off it, so the 413 can say so.
import type { ResponsesRequestBody } from "./schema.ts";

type Part = Record<string, unknown>;

function partBytes(p: Part): number {
  const url = typeof p.image_url === "string" && p.image_url.startsWith("data:") ? p.image_url.length : 0;
  const data = typeof p.file_data === "string" ? p.file_data.length : 0;
  const audio = (p.input_audio as { data?: unknown } | undefined)?.data;
  return url + data + (typeof audio === "string" ? audio.length : 0);
}

/** Characters of inline media in the input's message contents and function outputs. */
export function inlineMediaBytes(input: ResponsesRequestBody["input"]): number {
  if (typeof input === "string") return 0;
  let n = 0;
  for (const item of input as Part[]) {
    for (const list of [item.content, item.output]) {
      if (Array.isArray(list)) for (const p of list) if (p && typeof p === "object") n += partBytes(p as Part);
    }
  }
  return n;
}
