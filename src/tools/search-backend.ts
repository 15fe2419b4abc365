// The pluggable search backend behind the built-in web_search tool: one method, results as title/url/snippet.
// A provider turns every way a search can go wrong into a SearchError, which the tool loop reports to the model
// (the web_search_call item ends "failed") instead of failing the response.

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchBackend {
  /** Runs one search; rejects with a SearchError (or the signal's abort). */
  search(query: string, opts: { signal: AbortSignal }): Promise<SearchResult[]>;
}

/** A search that did not give results; `message` is safe to show the model and the client (no URLs, no internals). */
export class SearchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SearchError";
  }
}
