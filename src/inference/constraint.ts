// Which output constraint a request gets (forced tool calls, JSON and JSON-schema answer formats), the text a
// forced call opens with and the worker-written close after its JSON; and the 400 for strict schemas kiln cannot
// enforce, checked before anything is queued.
import { checkSchemaSubset, UnsupportedSchemaError } from "../protocol/schema-subset.ts";
import { ApiError } from "../errors/api-error.ts";
import type { ConstraintSpec, OutputConstraint } from "../protocol/text.ts";
import { forcedPrefixFor, type PromptFormat } from "./prompt-format.ts";
import type { AnswerFormat } from "./request.ts";
import type { ToolChoice, ToolDef } from "./tool-def.ts";
import type { ModelTokenizer } from "./tokenizer.ts";

type Schema = Record<string, unknown>;

/** A forced tool call: the text the turn starts with, what the model writes under the constraint, and the close. */
export interface ForcedCall {
  prefix: string;
  /** Null when the prompt format's call layout is unknown: the call is forced but not constrained. */
  spec: ConstraintSpec | null;
  /** Text the worker writes once the JSON is whole (e.g. `}\n</tool_call>`). */
  close: string;
}

/** Omitted parameters mean a function without parameters: its arguments are `{}`. */
const NO_PARAMETERS: Schema = { type: "object", properties: {}, additionalProperties: false };

/** The schema when kiln can enforce it, else null (a tool or format that did not ask for strict). */
function enforceable(schema: Schema): Schema | null {
  try {
    checkSchemaSubset(schema);
    return schema;
  } catch (e) {
    if (e instanceof UnsupportedSchemaError) return null;
    throw e;
  }
}

const argsSchema = (tool: ToolDef): Schema | null => enforceable(tool.function.parameters ?? NO_PARAMETERS);

/**
 * The forced call for a tool choice, or null when none is forced: a named tool, or `any` with one tool, start the
 * turn inside the call (`<tool_call>\n{"name": "x", "arguments": `) and constrain the arguments; `any` with several
 * opens the call and constrains the whole call object, so the name is one of the tools too (a 400 when the model's
 * call format is not Hermes-style, as the call object could not be written).
 */
export function forcedCall(format: PromptFormat, choice: ToolChoice, tools: ToolDef[] | null): ForcedCall | null {
  if (!tools?.length || choice === "auto" || choice === "none") return null;
  const tool = typeof choice === "object" ? tools.find((t) => t.function.name === choice.name) : tools.length === 1 ? tools[0] : undefined;
  if (tool) {
    const prefix = forcedPrefixFor(format, tool.function.name);
    if (prefix === null) return null;
    const close = closeAfterArguments(format, prefix);
    const schema = argsSchema(tool);
    return { prefix, spec: close === null ? null : schema ? { kind: "json_schema", schema } : { kind: "json_object" }, close: close ?? "" };
  }
  // Several tools: the call object is constrained, so the name is one of them too.
  const open = hermesOpen(format);
  if (open === null) {
    throw ApiError.badRequest("A tool_choice that makes the model call one of several tools needs a Hermes-style tool-call format, which this model does not declare; name the function in tool_choice.", "tool_choice");
  }
  return { prefix: `${open}\n`, spec: callObjectSpec(tools) ?? { kind: "json_object" }, close: `\n${format.toolCall!.close}` };
}

/** The open marker when calls are written Hermes-style (`{"name": …, "arguments": …}` after it), else null. */
function hermesOpen(format: PromptFormat): string | null {
  const open = format.toolCall?.open;
  return open && format.forcedToolPrefix === `${open}\n{"name": {name}, "arguments": ` ? open : null;
}

/**
 * A whole call object of one of `tools` (properties in that order, as xgrammar writes them). Null when a tool's
 * parameters are not enforceable: a call could then only be held to "some JSON object", with no name guarantee.
 */
function callObjectSpec(tools: ToolDef[]): ConstraintSpec | null {
  const defs: Record<string, Schema> = {};
  const branches: Schema[] = [];
  for (const [i, t] of tools.entries()) {
    const args = argsSchema(t);
    if (!args) return null;
    branches.push({
      type: "object",
      properties: { name: { const: t.function.name }, arguments: embed(args, `tool${i}`, defs) },
      required: ["name", "arguments"],
      additionalProperties: false,
    });
  }
  return { kind: "json_schema", schema: { $defs: defs, anyOf: branches } };
}

/** What closes a call opened by `prefix` once its arguments are whole: its open braces and the close marker. */
function closeAfterArguments(format: PromptFormat, prefix: string): string | null {
  const marks = format.toolCall;
  if (!marks || !prefix.startsWith(marks.open) || !prefix.trimEnd().endsWith(":")) return null;
  // Tool names are [a-zA-Z0-9_-], so every brace in the prefix is structure.
  const body = prefix.slice(marks.open.length);
  const open = body.split("{").length - body.split("}").length;
  return open > 0 ? `${"}".repeat(open)}\n${marks.close}` : null;
}

/**
 * Places `schema` under `$defs[key]` of another root, its own definitions beside it as `key__name`, rewriting
 * its references ("#" and "#/$defs/…") to match: definitions are only read at a schema's root.
 */
function embed(schema: Schema, key: string, defs: Record<string, Schema>): Schema {
  const local = { ...((schema.definitions as Record<string, Schema>) ?? {}), ...((schema.$defs as Record<string, Schema>) ?? {}) };
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (typeof v !== "object" || v === null) return v;
    const out: Schema = {};
    for (const [k, sub] of Object.entries(v)) {
      if (k === "$ref" && typeof sub === "string") out[k] = sub === "#" ? `#/$defs/${key}` : sub.replace(/^#\/(\$defs|definitions)\//, `#/$defs/${key}__`);
      // Values in enum and const are data, not schemas.
      else out[k] = k === "enum" || k === "const" ? sub : rewrite(sub);
    }
    return out;
  };
  const { $defs: _d, definitions: _o, ...body } = schema;
  defs[key] = rewrite(body) as Schema;
  for (const [name, def] of Object.entries(local)) defs[`${key}__${name}`] = rewrite(def) as Schema;
  return { $ref: `#/$defs/${key}` };
}

/** The constraint of an answer format, or null for text. A schema kiln cannot enforce (not strict) gets "any object". */
export function formatSpec(format: AnswerFormat): ConstraintSpec | null {
  if (format.kind === "text") return null;
  if (format.kind === "json" || !format.schema) return { kind: "json_object" };
  const schema = enforceable(format.schema);
  return schema ? { kind: "json_schema", schema } : { kind: "json_object" };
}

/** A 400 naming the keyword when a schema asked to be strict lies outside what kiln enforces. */
export function checkStrictSchema(schema: Schema | null | undefined, param: string): void {
  try {
    checkSchemaSubset(schema ?? NO_PARAMETERS);
  } catch (e) {
    if (!(e instanceof UnsupportedSchemaError)) throw e;
    throw ApiError.badRequest(`Invalid schema for ${param} (strict): ${e.message}.`, param);
  }
}

/**
 * The worker's constraint for a prepared request, or undefined: a forced call's JSON; else, with tools, the calls
 * the model opens when a tool is strict (the answer format is then not constrained: a JSON-only answer could
 * never open a call); else the answer format's, unless a client prefill already began the answer. `startAfter`
 * (an opened thinking block's close) delays the constraint until the block closes; for a forced call its framing
 * carries the call's opening, which the worker writes.
 */
export function outputConstraint(
  tok: Pick<ModelTokenizer, "encodeText" | "stopTokenIds" | "format">,
  o: { call: ForcedCall | null; format: AnswerFormat; tools: ToolDef[] | null; prefilled: boolean; startAfter?: OutputConstraint["startAfter"]; ignoreEos: boolean },
): OutputConstraint | undefined {
  const stopIds = tok.stopTokenIds;
  if (!stopIds.length) return undefined;
  const after = o.startAfter ? { startAfter: o.startAfter } : {};
  if (o.call) {
    if (!o.call.spec) return undefined;
    // The close ends the turn too, so the call is the whole answer (unless the client asked to ignore end ids).
    const closeIds = [...tok.encodeText(o.call.close), ...(o.ignoreEos ? [] : [stopIds[0]!])];
    return { spec: o.call.spec, stopIds, closeIds, ...after };
  }
  if (o.tools?.length) {
    const calls = unforcedCalls(tok, o.tools);
    return calls ? { ...calls, stopIds, ...after } : undefined;
  }
  const spec = o.prefilled ? null : formatSpec(o.format);
  return spec ? { spec, stopIds, ...after } : undefined;
}

/**
 * Calls the model opens itself, when a tool asked for strict: once it writes the open marker (one token) the
 * worker forces the newline, the call object is constrained and closed. Every tool must be enforceable, since
 * the constraint starts before the model has named one.
 */
function unforcedCalls(tok: Pick<ModelTokenizer, "encodeText" | "format">, tools: ToolDef[]): Pick<OutputConstraint, "spec" | "closeIds" | "trigger"> | null {
  const open = hermesOpen(tok.format);
  if (!open || !tools.some((t) => t.function.strict)) return null;
  const spec = callObjectSpec(tools);
  const marker = tok.encodeText(open);
  if (!spec || marker.length !== 1) return null;
  return { spec, closeIds: tok.encodeText(`\n${tok.format.toolCall!.close}`), trigger: { tokenId: marker[0]!, framingIds: tok.encodeText("\n") } };
}
