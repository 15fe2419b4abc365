// url_citation annotations for an answer written after web searches: each "[n]" marker the model wrote that names a
// source it was given is annotated with that source; an answer that cites none is annotated as a whole.
import type { NumberedSource } from "./web-search.ts";

export interface UrlCitation {
  type: "url_citation";
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

/**
 * The annotations of `text` given the numbered `sources`. Indexes count Unicode code points (what Python clients
 * slice by), with end_index exclusive. A marker "[n]" gets an annotation over the marker for source n. When the
 * model cited no source at all, the whole answer (start 0, end its length) is annotated once per source it was
 * given: the answer was written from those results, and the client should still be able to show where from.
 */
export function citationsFor(text: string, sources: readonly NumberedSource[]): UrlCitation[] {
  if (!sources.length) return [];
  const byNumber = new Map(sources.map((s) => [s.n, s]));
  const out: UrlCitation[] = [];
  const marker = /\[(\d{1,4})\]/g;
  // Code point offsets: count code points before each match rather than using the UTF-16 index.
  let units = 0;
  let points = 0;
  for (const m of text.matchAll(marker)) {
    points += countPoints(text, units, m.index);
    units = m.index;
    const source = byNumber.get(Number(m[1]));
    if (!source) continue;
    out.push({ type: "url_citation", start_index: points, end_index: points + m[0].length, url: source.url, title: source.title });
  }
  if (out.length) return out;
  const length = countPoints(text, 0, text.length);
  return sources.map((s) => ({ type: "url_citation", start_index: 0, end_index: length, url: s.url, title: s.title }));
}

function countPoints(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
