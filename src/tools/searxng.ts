// The SearXNG provider of the web_search tool: GET {base}/search?q=…&format=json on the one configured instance,
// read its `results` array. Redirects are not followed (kiln talks to that base URL only), the whole search has a
// time limit, and the answer is counted while it is read and abandoned past its byte cap.
import { type SearchBackend, SearchError, type SearchResult } from "./search-backend.ts";

export interface SearxngOptions {
  /** The instance's base URL (from KILN_WEB_SEARCH_URL), without a trailing slash. */
  baseUrl: string;
  timeoutMs: number;
  maxResults: number;
  maxBytes: number;
  /** Injected by tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** What one result may contribute to the prompt, so a handful of results cannot crowd out the context window. */
const MAX_TITLE = 200;
const MAX_SNIPPET = 500;
const MAX_URL = 2048;

const clean = (s: string, max: number) => s.replace(/\s+/g, " ").trim().slice(0, max);

export class SearxngBackend implements SearchBackend {
  constructor(private readonly o: SearxngOptions) {}

  /** The request URL: always the configured base, with only the query string supplied by the search. */
  searchUrl(query: string): string {
    const u = new URL(this.o.baseUrl);
    u.pathname = `${u.pathname.replace(/\/+$/, "")}/search`;
    u.search = new URLSearchParams({ q: query, format: "json" }).toString();
    return u.href;
  }

  async search(query: string, opts: { signal: AbortSignal }): Promise<SearchResult[]> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.o.timeoutMs);
    const onAbort = () => controller.abort();
    opts.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await (this.o.fetch ?? fetch)(this.searchUrl(query), {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: controller.signal,
      });
      if (res.status !== 200) {
        void res.body?.cancel().catch(() => {});
        throw new SearchError(`the search backend answered HTTP ${res.status}`);
      }
      const body = await readCapped(res, this.o.maxBytes, controller);
      return this.parse(body);
    } catch (e) {
      if (opts.signal.aborted) throw opts.signal.reason ?? e;
      if (timedOut) throw new SearchError(`the search backend did not answer within ${this.o.timeoutMs} ms`);
      if (e instanceof SearchError) throw e;
      throw new SearchError("the search backend could not be reached");
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
    }
  }

  private parse(body: string): SearchResult[] {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new SearchError("the search backend's answer was not JSON");
    }
    const results = (json as { results?: unknown } | null)?.results;
    if (!Array.isArray(results)) throw new SearchError("the search backend's answer had no results list");
    const out: SearchResult[] = [];
    for (const r of results) {
      if (out.length >= this.o.maxResults) break;
      const { title, url, content } = (r ?? {}) as Record<string, unknown>;
      // Only web links are sources a client can follow; anything else (javascript:, data:, junk) is skipped.
      if (typeof url !== "string" || url.length > MAX_URL || !/^https?:\/\//i.test(url)) continue;
      out.push({
        title: clean(typeof title === "string" && title.trim() ? title : url, MAX_TITLE),
        url,
        snippet: clean(typeof content === "string" ? content : "", MAX_SNIPPET),
      });
    }
    return out;
  }
}

/** The body as text, refused before reading when Content-Length is over the cap, and abandoned once it passes it. */
async function readCapped(res: Response, maxBytes: number, controller: AbortController): Promise<string> {
  const tooBig = () => new SearchError(`the search backend's answer was larger than ${maxBytes} bytes`);
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    controller.abort();
    throw tooBig();
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      void reader.cancel().catch(() => {});
      controller.abort();
      throw tooBig();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
