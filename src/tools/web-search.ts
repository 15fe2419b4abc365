// The built-in web_search tool: the reserved names, the function definition the prompt carries, how a call's query
// is read, the tool result (numbered sources) fed back to the model, and the BuiltinTool the core's loop runs.
// Also builds the configured backend once per configuration.
import type { Config } from "../config.ts";
import type { BuiltinResult, BuiltinTool } from "../inference/builtin-tool.ts";
import { type Conversation, textOf } from "../inference/conversation.ts";
import type { ToolDef } from "../inference/tool-def.ts";
import { type SearchBackend, SearchError, type SearchResult } from "./search-backend.ts";
import { SearxngBackend } from "./searxng.ts";

/**
 * The names reserved by web_search, in one list: the tool types a Responses request may use to ask for it (the
 * first is also the function name the model calls), and therefore names no function tool of the same request may
 * take while web_search is on (400, param "tools").
 */
export const WEB_SEARCH_NAMES: readonly string[] = ["web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"];

/** The function the model calls to search. */
export const WEB_SEARCH_FUNCTION = WEB_SEARCH_NAMES[0]!;

export const WEB_SEARCH_TOOL: ToolDef = {
  type: "function",
  function: {
    name: WEB_SEARCH_FUNCTION,
    description: "Search the web. Returns numbered sources; cite a source by writing its number in brackets, like [1].",
    parameters: {
      type: "object",
      properties: { query: { type: "string", description: "What to search for" } },
      required: ["query"],
      additionalProperties: false,
    },
  },
};

/** Most tokens a forced search may spend on its call: a query is short. */
export const FORCED_QUERY_TOKENS = 64;

/** A source as the model and the citations see it: its number in this response, title and URL. */
export interface NumberedSource {
  n: number;
  title: string;
  url: string;
}

/** What a search result shows the client: the sources it gave, or why it failed. */
export type SearchDetail = { sources: NumberedSource[] } | { reason: string };

/** The sources of a completed search's result (none for a failed one, or another tool's). */
export function sourcesOf(result: BuiltinResult | undefined): NumberedSource[] {
  const d = result?.status === "completed" ? (result.detail as SearchDetail | undefined) : undefined;
  return d && "sources" in d ? d.sources : [];
}

/** The query of a web_search call's JSON arguments, or null when there is none worth sending. */
export function queryOf(args: string): string | null {
  try {
    const q = (JSON.parse(args) as { query?: unknown } | null)?.query;
    return typeof q === "string" && q.trim() ? q.trim().slice(0, 500) : null;
  } catch {
    return null;
  }
}

/** The tool result the model reads: one line per source, numbered from `first` ("[n] title — url — snippet"). */
export function resultText(query: string, results: SearchResult[], first: number): string {
  if (!results.length) return `The web search for "${query}" found nothing.`;
  const lines = results.map((r, i) => `[${first + i}] ${r.title} — ${r.url}${r.snippet ? ` — ${r.snippet}` : ""}`);
  return `Web search results for "${query}". Cite a source by writing its number in brackets, like [${first}].\n${lines.join("\n")}`;
}

export function failureText(reason: string): string {
  return `The web search failed: ${reason}. Answer from what you already know, and say that the search failed.`;
}

const failed = (reason: string): BuiltinResult => ({ status: "failed", text: failureText(reason), detail: { reason } satisfies SearchDetail });

/** The last user turn's text: the query of a forced search whose model could not write one. */
function lastUserText(conv: Conversation): string {
  for (let i = conv.length - 1; i >= 0; i--) if (conv[i]!.role === "user") return textOf(conv[i]!.parts).trim().slice(0, 500);
  return "";
}

/** web_search as a built-in tool over `backend`; sources are numbered across one response's searches. */
export function webSearchTool(backend: SearchBackend, maxCalls: number): BuiltinTool {
  return {
    definition: WEB_SEARCH_TOOL,
    maxCalls,
    forcedCallTokens: FORCED_QUERY_TOKENS,
    // The client asked for a search, and the question is the best query there is.
    fallbackArguments: (conv) => JSON.stringify({ query: lastUserText(conv) }),
    failed,
    session() {
      let sources = 0;
      return {
        async run(args, signal) {
          const query = queryOf(args);
          if (!query) return failed("the call had no query");
          try {
            const results = await backend.search(query, { signal });
            const numbered: NumberedSource[] = results.map((r, i) => ({ n: sources + 1 + i, title: r.title, url: r.url }));
            const text = resultText(query, results, sources + 1);
            sources += results.length;
            return { status: "completed", text, detail: { sources: numbered } satisfies SearchDetail };
          } catch (e) {
            if (signal.aborted) return failed("the request was stopped");
            return failed(e instanceof SearchError ? e.message : "the search backend failed");
          }
        },
      };
    },
  };
}

const backends = new WeakMap<Config, SearchBackend | null>();

/** The search backend the configuration names (one per config), or null when none is configured. */
export function searchBackendFor(config: Config): SearchBackend | null {
  if (!backends.has(config)) {
    backends.set(config, config.webSearchUrl
      ? new SearxngBackend({ baseUrl: config.webSearchUrl, timeoutMs: config.webSearchTimeoutMs, maxResults: config.webSearchMaxResults, maxBytes: config.webSearchMaxBytes })
      : null);
  }
  return backends.get(config)!;
}
