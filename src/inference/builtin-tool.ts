// The seam for tools kiln runs itself inside one response (each in its own file in src/tools/): what the model sees,
// how a call is run, and what a family shows of its result. The core's tool loop (tool-loop.ts) runs them; a new
// built-in tool is a file in src/tools/ implementing this, not an edit of the core.
import type { Conversation } from "./conversation.ts";
import type { ToolDef } from "./tool-def.ts";

/** How one call ended. */
export interface BuiltinResult {
  status: "completed" | "failed";
  /** What the model reads as the call's result. */
  text: string;
  /** What a family shows of the result (e.g. a search's numbered sources), in the tool's own shape. */
  detail?: unknown;
}

/** One response's use of a tool: state that spans its calls (e.g. source numbers that keep counting). */
export interface BuiltinSession {
  /** Runs one call with the model's JSON arguments; may throw (the loop reports a failed call). */
  run(args: string, signal: AbortSignal): Promise<BuiltinResult>;
}

export interface BuiltinTool {
  /** The function the model calls; its name is the tool's name in blocks and tool_choice. */
  definition: ToolDef;
  /** Most calls one response may run: a call past it fails, and later steps no longer offer the tool. */
  maxCalls: number;
  /**
   * Most tokens a step forced to call this tool may spend on the call: a model that cannot write one (random
   * weights write an endless string) should not burn the answer's budget on it.
   */
  forcedCallTokens: number;
  /** The arguments of a forced call the model could not write (cut or malformed), or null to end the response. */
  fallbackArguments(conversation: Conversation): string | null;
  /** A failed result with the reason the model and the client are told (a limit, a stop). */
  failed(reason: string): BuiltinResult;
  session(): BuiltinSession;
}

export const builtinName = (t: BuiltinTool) => t.definition.function.name;
