// The Responses side of the built-in web_search tool, request half: which tool types ask for it, the 400s (no
// backend configured, a function tool taking a reserved name), whether tool_choice forces a search, and the
// server's built-in tool (backend and per-response limit) from its configuration.
import type { Config } from "../../config.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import type { BuiltinTool } from "../../inference/builtin-tool.ts";
import { searchBackendFor, WEB_SEARCH_NAMES, webSearchTool } from "../../tools/web-search.ts";
import type { ResponsesRequestBody } from "./schema.ts";

export const isWebSearchType = (type: string) => WEB_SEARCH_NAMES.includes(type);

/**
 * Whether the request turns web_search on. On a server without a search backend an offered web_search is simply
 * not given to the model (clients such as Codex offer it by default), but a call forced onto it is a 400 (param
 * tool_choice): the request asks for what the server cannot do. With it on, a function tool named like the built-in
 * tool is a 400 (param tools): the model could not tell them apart.
 */
export function webSearchRequested(body: ResponsesRequestBody, tool: BuiltinTool | null): boolean {
  const tools = body.tools ?? [];
  if (!tools.some((t) => isWebSearchType(t.type))) return false;
  if (!tool) {
    if (forcesWebSearch(body, tools.filter((t) => !isWebSearchType(t.type)).length)) {
      throw ApiError.badRequest("tool_choice forces the web_search tool, which needs a search backend, and this server has none configured (KILN_WEB_SEARCH_URL).", "tool_choice");
    }
    return false;
  }
  tools.forEach((t, i) => {
    if (t.type === "function" && WEB_SEARCH_NAMES.includes(t.name ?? "")) {
      throw ApiError.badRequest(`tools.${i}.name '${clip(t.name ?? "")}' is reserved by the web_search tool (reserved: ${WEB_SEARCH_NAMES.join(", ")}); rename the function.`, "tools");
    }
  });
  return true;
}

/** tool_choice {type: "web_search"} (or another reserved type), or "required" when web_search is the only tool. */
export function forcesWebSearch(body: ResponsesRequestBody, functionTools: number): boolean {
  const tc = body.tool_choice;
  if (tc === "required") return functionTools === 0;
  return typeof tc === "object" && tc !== null && isWebSearchType(tc.type);
}

/** The server's web_search tool from its configuration, or null when no backend is configured. */
export function webSearchBuiltin(config: Config): BuiltinTool | null {
  const backend = searchBackendFor(config);
  return backend ? webSearchTool(backend, config.webSearchMaxCalls) : null;
}
