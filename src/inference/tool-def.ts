// A tool as the core and chat templates see it, and the request's rule for calling tools.

/** A function tool, in the shape chat templates receive (`{type: "function", function: {…}}`). */
export interface ToolDef {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** Whether the model calls a tool: as it likes, never, at least one of the tools, or the named one. */
export type ToolChoice = "auto" | "none" | "any" | { name: string };
